"""What the numbers show made a comparison's interval wide, and where its rounds all point one way.

A disturbed sentence once named the rows' load as its cause even where that load showed an idle machine ("the
comparison was disturbed (load up to 1.4, other processes up to 1% of the CPU)", 07's readers): the load is context,
and the cause a reader can check is in the numbers beside it: the cells' own rounds disagreeing, the paired ratio's
scatter round to round, the runs' scatter, the host's speed probe moving between rounds. And a "could not tell"
beside rounds that all point one way (05: fused faster in every round, 1.27-2.15x) must say so, and why that still
settles nothing (a few rounds all one way happen by chance; the noise the interval rests on spans no change).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.core.units import fmt_seconds
from workbench.judge.dips import SET_ASIDE, host_slow_rounds, ids_at_speed, rounds_kept
from workbench.judge.disturbed import NOT_BUSY, cell_hint
from workbench.judge.few_rounds import is_paired_basis, read_basis, too_few_words
from workbench.judge.stats import mode_median
from workbench.judge.verdicts import (
    BLOCKS,
    PRIOR_DF,
    effects,
    is_disturbed,
    paired_noise,
    parse_samples,
    round_ids,
    span_disturbed,
)
from workbench.report.claims_rows import _num, json_list, quartiles_wide
from workbench.report.ratio_text import interval_name, interval_text, sigma_pct


def busy_share(rows: pd.DataFrame) -> float | None:
    """The largest share of the CPU that other processes used while ``rows`` were measured (each row records
    its cell's ``other_cpu_share``); None where no row says."""
    if "other_cpu_share" not in rows:
        return None
    shares = pd.to_numeric(rows["other_cpu_share"], errors="coerce").dropna()
    return float(shares.max()) if len(shares) else None


def load_text(rows: pd.DataFrame) -> str:
    """"load up to 4.7, other processes up to 85% of the CPU" from the rows' own records ("" where none says)."""
    parts = []
    if "load_avg_1m" in rows:
        load = pd.to_numeric(rows["load_avg_1m"], errors="coerce").dropna()
        if len(load):
            parts.append(f"load up to {load.max():.1f}")
    share = busy_share(rows)
    if share is not None:
        parts.append(f"other processes up to {share:.0%} of the CPU")
    return ", ".join(parts)


def aside_rounds(rows: pd.DataFrame) -> set[Any]:
    """The rounds the workers' host probe set aside in any of ``rows``, by round id where a row has its ids (a
    round set aside on both sides of a pair is one round, as a few-rounds basis counts it: 03 said "2 set aside"
    and, in the same sentence, "set 4 rounds aside"), else by row and index."""
    out: set[Any] = set()
    for n, r in enumerate(rows.to_dict("records")):
        medians = [float(x) for x in parse_samples(r.get("round_medians_s"))]
        ids = round_ids(r.get("round_ids"))
        for i in host_slow_rounds(medians, _slowdowns(r)):
            out.add(ids[i] if ids and len(ids) == len(medians) else (n, i))
    return out


def _cell_name(row: Mapping[str, Any]) -> str:
    """"numba @ numba" where the row names its variant and backend, else "a cell"."""
    v, b = row.get("variant"), row.get("backend")
    return f"{v} @ {b}" if isinstance(v, str) and isinstance(b, str) else "a cell"


def spread_text(rows: pd.DataFrame) -> str:
    """What the rows' own numbers show varied: a cell's rounds (its slowest round median over its fastest) and the
    host's speed probe between rounds ("" where the rows hold neither)."""
    parts = []
    # the widest cell by name (03 printed "a cell's own rounds differed by up to 1.06x" and not whose)
    widest = max(((float(x.max() / x.min()), _cell_name(r)) for r in rows.to_dict("records")
                  for x in (parse_samples(r.get("round_medians_s")),) if len(x) > 1 and x.min() > 0), default=None)
    if widest is not None:
        parts.append(f"{widest[1]}'s own rounds differed by up to {widest[0]:.2f}× (its slowest round over its "
                     "fastest)")
    probes = [float(max(p) / min(p)) for p in (json_list(t) for t in rows.get(
        "round_probes_s", pd.Series(dtype=object)).dropna()) if len(p) > 1 and min(p) > 0]
    # two probes, each named (docs/statistics.md): the sweep's own, read between rounds in the sweep's process, and
    # each worker's host probe, read around the cell's rounds, which sets a slow host's round aside (judge/dips.py).
    # 05 printed "the host's speed probe moved by up to 1% between rounds" beside "round 2 set aside: taken while the
    # host ran slow (its probe 1.17x its best ...)": one probe's calm read as the other's verdict undone
    aside = len(aside_rounds(rows))
    if probes and max(probes) > 1.005:
        parts.append(f"the sweep's between-rounds speed probe moved by up to {max(probes) - 1:.0%}")
    if aside:
        parts.append(f"the workers' host probe, read around each cell's rounds, set {aside} round"
                     f"{'' if aside == 1 else 's'} aside as taken while the host ran slow")
    return "; ".join(parts)


def disturbed_rounds(rows: pd.DataFrame) -> float:
    """The widest round spread (slowest round median over fastest) of the ``rows`` that read disturbed
    (:func:`~workbench.report.claims_rows.quartiles_wide`); NaN where none has two rounds."""
    spans = [float(x.max() / x.min()) for r in rows.to_dict("records") if quartiles_wide(r)
             for x in (parse_samples(r.get("round_medians_s")),) if len(x) > 1 and x.min() > 0]
    return max(spans, default=float("nan"))


def cell_rerun_hint(v: Mapping[str, Any], busy: bool | None, hint: str) -> str:
    """The advice for a comparison resting on a disturbed cell, following its cause: where that cell's rounds agree
    (within :data:`~workbench.judge.verdicts.NOISY_SPREAD`) on a machine that was not busy, its spread lies within
    its calls, which more rounds do not narrow (01 and 03 advised "rerun it with more rounds" beside rounds 1.06x
    apart on an idle machine); else ``hint`` (rounds that disagree: more rounds; a busy machine: an idle rerun)."""
    return hint if busy is not False else cell_hint(busy, _num(v, "disturbed_rounds"))


def basis_aside_text(v: Mapping[str, Any], said: str) -> str:
    """The rounds the pair's basis set aside ("2 paired rounds (1 set aside by the slow host)"), said where ``said``
    does not already: 01 printed that basis in its table while the sentence and its notes named none, and one note
    read "the machine was not busy"; "" where none was set aside or ``said`` names it."""
    few = read_basis(v.get("basis"))
    if few is None or not few[2] or "aside" in said:
        return ""
    k = few[2]
    return (f"{k} round{'' if k == 1 else 's'} set aside by the workers' host probe as taken while the host ran slow "
            f"(the probe, not other processes, set {'it' if k == 1 else 'them'} aside)")


def disturbance_text(rows: pd.DataFrame) -> str:
    """What made a comparison of ``rows`` too wide, said beside it: where the rows show a busy machine (other
    processes past :data:`~workbench.core.conditions.BUSY_CPU_SHARE` of the CPU), its load; where they show an idle
    one, what their own numbers show varied (:func:`spread_text`), the load after it as context, never as the
    cause; "" where no row says anything."""
    load, share = load_text(rows), busy_share(rows)
    if share is None or share > BUSY_CPU_SHARE:
        return load
    spread = spread_text(rows)
    # no parentheses: this text is put inside a sentence's own (05 printed "... (load up to 0.8, ... of the CPU)): ")
    idle = f"on a machine that was {NOT_BUSY}, with {load}" if load else f"on a machine that was {NOT_BUSY}"
    return f"{spread}, {idle}" if spread else f"not by a busy machine, with {load}" if load else "not by a busy machine"


def scatter_text(sigma: float) -> str:
    """A log sigma as a ± (:func:`~workbench.report.ratio_text.sigma_pct`) within ±50%, past it as a factor ("2.4×
    either way"): a ± past 50% is refused beside a verdict (:func:`workbench.report.claims.check_printed_intervals`)."""
    return sigma_pct(sigma) if math.expm1(abs(sigma)) <= 0.5 else f"{math.exp(abs(sigma)):.2g}× either way"


def noise_cause(v: Mapping[str, Any]) -> str:
    """What the interval of one pair rests on, from its own fields: the paired ratio's scatter round to round, or
    (two runs) the runs' scatter and the cells' own rounds (``run_noise``, where the table gave it); "" where the
    pair does not say."""
    noise, n = _num(v, "noise"), int(_num(v, "n_a")) if math.isfinite(_num(v, "n_a")) else 0
    if not math.isfinite(noise) or noise <= 0:
        return ""
    basis = str(v.get("basis") or "")
    few = read_basis(basis)   # rounds set aside as taken while the host ran slow left the pair too few (tutorials)
    if few is not None and few[0]:
        return (f"its interval rests on its {few[1]} paired rounds at speed ({few[2]} more set aside as taken while "
                f"the host ran slow), weighed with its group's typical paired scatter: a paired noise of "
                f"{scatter_text(noise)} a round (one sigma, docs/statistics.md)")
    if few is not None:
        return (f"too few of its rounds were left at speed to pair ({few[1]} shared, {few[2]} set aside as taken "
                f"while the host ran slow) and no typical paired scatter stood in (none of its group, its kernel or "
                f"the run had one), so its interval rests "
                f"on an assumed drift of {scatter_text(noise)} (one sigma)")
    if basis in ("paired rounds", BLOCKS):
        # the noise is the rounds' scatter weighed with the group's typical one (docs/statistics.md), not how far the
        # rounds themselves varied: 06 printed "its paired ratio varied by ±27% round to round" beside rounds whose
        # ratios ran 0.9-58x; the rounds' own range is said beside it where the pair carries it
        said = f"its interval rests on a paired noise of {scatter_text(noise)} a round (one sigma, over {n} rounds)"
        r = [float(x) for x in (v.get("round_ratios") or []) if np.isfinite(x) and x > 0]
        if len(r) >= 2 and (span_disturbed(min(r), max(r)) or max(r) / min(r) > math.exp(2 * noise)):
            said += (f", its rounds weighed with its group's typical scatter (docs/statistics.md); its rounds' own "
                     f"speed-ups ran from {min(r):.2g}× to {max(r):.2g}×")
        return said
    if basis == "one stream":
        return f"one stream a side, whose drift is assumed ({scatter_text(noise)}, one sigma)"
    run = _num(v, "run_noise")
    if math.isfinite(run) and 0 < run <= noise:
        own = math.sqrt(max(noise ** 2 - run ** 2, 0.0))
        runs, rounds = f"the runs' scatter ({scatter_text(run)})", f"its own rounds ({scatter_text(own)})"
        first, then = (runs, rounds) if run >= own else (rounds, runs)
        return f"its interval rests on {first} more than {then}, together {scatter_text(noise)} (one sigma)"
    return f"its interval rests on its rounds and the runs' scatter, a noise of {scatter_text(noise)} (one sigma)"


def round_ratios(base: Mapping[str, Any], other: Mapping[str, Any], same_run: bool) -> list[float]:
    """The speed-up (base's time over other's) of each round the two rows share, where they were measured in the
    same run: each visit's block effect where ``other`` was timed beside ``base``, else round medians matched by
    round id (or by order where neither has ids and both have as many). Two runs: [] (no round is shared)."""
    if not same_run:
        return []
    d = effects(other.get("pair_d"))
    if len(d) and other.get("pair_with") is not None and other.get("pair_with") == base.get("cell_key"):
        return [float(math.exp(x)) for x in d]
    a, b = parse_samples(base.get("round_medians_s")), parse_samples(other.get("round_medians_s"))
    sa, sb = _slowdowns(base), _slowdowns(other)
    # rounds a headline set aside (taken while the host ran slow) pair with none, as in the verdict (05 printed
    # "faster in every one of its 3 rounds (1.24-1.41x)" counting a round the fused cell's headline left out)
    ia, ib = ids_at_speed(round_ids(base.get("round_ids")), list(a), sa), ids_at_speed(
        round_ids(other.get("round_ids")), list(b), sb)
    if ia and ib and len(ia) == len(a) and len(ib) == len(b):
        at = dict(zip(ib, b, strict=True))  # a round set aside on both sides is marked alike: it pairs with none
        return [float(x / at[k]) for k, x in zip(ia, a, strict=True) if k in at and not k.endswith(SET_ASIDE)]
    if len(a) != len(b):
        return []
    kept = set(rounds_kept(list(a), sa)) & set(rounds_kept(list(b), sb))
    return [float(x / y) for i, (x, y) in enumerate(zip(a, b, strict=True)) if i in kept]


def _slowdowns(row: Mapping[str, Any]) -> list[float]:
    """A row's per-round host slowdowns (``round_host_slowdowns``), [] where it has none."""
    return [float(x) for x in parse_samples(row.get("round_host_slowdowns"))]


def headline_rounds_text(row: Mapping[str, Any]) -> str:
    """Which of a row's rounds its headline median is not taken of, said after "its headline": "leaves out its
    round 3 (taken while the host ran slow)", or "is the median of one of the two groups its rounds fell in"; ""
    where it is the median of them all. Said where a table's medians lie outside the range of the pair's rounds
    (their ratio, over the same rounds, always lies within it)."""
    medians = [float(x) for x in parse_samples(row.get("round_medians_s"))]
    slow = sorted(host_slow_rounds(medians, _slowdowns(row)))
    parts = []
    if slow:
        rounds = ", ".join(str(i + 1) for i in slow)
        parts.append(f"leaves out its round{'s' if len(slow) > 1 else ''} {rounds} (taken while the host ran slow)")
    kept = [medians[i] for i in rounds_kept(medians, _slowdowns(row))]
    if len(kept) >= 2 and not math.isclose(mode_median(kept), float(np.median(kept)), rel_tol=1e-9):
        parts.append("is the median of one of the two groups its rounds fell in")
    return " and ".join(parts)


def pair_headlines(r: Mapping[str, Any], sides: pd.DataFrame) -> tuple[str, str]:
    """(base's, variant's) :func:`headline_rounds_text`, where each side has exactly one row; ("", "") otherwise."""
    if r.get("baseline_variant") is None:
        return "", ""
    base = sides[(sides["variant"] == r.get("baseline_variant")) & (sides["backend"] == r.get("baseline_backend"))]
    other = sides[(sides["variant"] == r.get("variant")) & (sides["backend"] == r.get("backend"))]
    if len(base) != 1 or len(other) != 1 or base.index[0] == other.index[0]:
        return "", ""
    return headline_rounds_text(base.iloc[0].to_dict()), headline_rounds_text(other.iloc[0].to_dict())


def medians_outside_text(v: Mapping[str, Any], lo: float, hi: float, base: str, other: str) -> str:
    """Where the table's medians (``table_median_a``/``_b``) give a speed-up outside [lo, hi], the range of the
    pair's rounds: that, and why (which rounds a headline leaves out, ``headline_a``/``_b`` from
    :func:`pair_headlines`); "" where it lies within. The ratio of two medians over the same rounds always lies
    within their rounds' ratios, so a ratio outside says the headlines are taken of other rounds."""
    a, b = _num(v, "table_median_a"), _num(v, "table_median_b")
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        return ""
    ratio = a / b
    if lo / 1.005 <= ratio <= hi * 1.005:   # within the rounds' range as printed
        return ""
    shown = f"{ratio:.2f}×" if lo > 1 else f"{1 / ratio:.2f}×"
    if (ratio > 1) != (lo > 1) and f"{ratio:.2f}" != "1.00":
        # the other way from the rounds: which cell the table's medians make the faster, said (10 printed "numpy-eager
        # was faster in every one of its 2 rounds (...; the table's medians give 0.97×" beside a table where
        # numpy-graph's median was the lower, and left the reader to work out that 0.97× points the other way)
        shown += f", {other if ratio > 1 else base} the faster by them"
    why = "; ".join(f"{who}'s headline {note}" for who, note in ((base, str(v.get("headline_a") or "")),
                                                                   (other, str(v.get("headline_b") or ""))) if note)
    return (f"the table's medians give {shown}, outside these rounds' range, because "
            + (why if why else "they are taken over other rounds than those paired here"))


def rounds_apart(base: Mapping[str, Any], other: Mapping[str, Any]) -> tuple[float, float] | None:
    """Two runs' cells: (every round's least, greatest speed-up) = (min(a)/max(b), max(a)/min(b)); its rounds all
    point one way where both ends lie on one side of 1."""
    a, b = parse_samples(base.get("round_medians_s")), parse_samples(other.get("round_medians_s"))
    if len(a) < 2 or len(b) < 2:
        return None
    return float(a.min() / b.max()), float(a.max() / b.min())


def past_one_text(lo: float, hi: float) -> str | None:
    """A range of ratios all above 1 ("1.004-1.72×"), with as many decimals as its low end needs to print above 1
    (10 printed "faster in every round (1.00-1.72x)": a round at 1.00× is not faster); None where even
    four decimals print it as 1 (no round can then be called faster in print)."""
    for decimals in (2, 3, 4):
        if float(f"{lo:.{decimals}f}") > 1:
            if f"{lo:.{decimals}f}" == f"{hi:.{decimals}f}":   # one value, not an empty range (10: "1.01-1.01×")
                return f"{lo:.{decimals}f}×"
            # a high end past 10× at three significant figures at most: 07 printed "1.51-217.76×", two decimals on a
            # range over 144×, a precision no round's scatter supports (below 10× both ends keep one precision)
            top = max(0, min(decimals, 2 - math.floor(math.log10(hi)))) if hi >= 10 else decimals
            return f"{lo:.{decimals}f}-{hi:.{top}f}×"
    return None


def _solve_typical(d: np.ndarray, noise: float) -> float | None:
    """The typical spread ``t`` that :func:`~workbench.judge.verdicts.paired_noise` moderated the effects ``d`` with
    to give ``noise`` (it grows with ``t``: bisection), or None where no ``t`` gives it (the pair was judged on other
    effects than ``d``, or unmoderated)."""
    def noise_at(t: float) -> float:
        return paired_noise(d, t)[0]

    lo, hi = 0.0, 10.0 * noise + 1.0
    if not noise_at(lo) <= noise <= noise_at(hi):
        return None
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if noise_at(mid) < noise else (lo, mid)
    t = (lo + hi) / 2
    return t if abs(noise_at(t) - noise) <= 1e-6 * max(noise, 1e-12) else None


def interval_makeup(v: Mapping[str, Any], ratios: list[float]) -> str:
    """What a paired interval rests on, in words with its figures: the pair's own rounds' scatter moderated by the
    typical paired scatter of its group in the run, which counts as :data:`~workbench.judge.verdicts.PRIOR_DF` rounds
    (docs/statistics.md). With 3 rounds the typical part weighs two thirds: 01 said "the interval the rounds'
    scatter gives" of an interval of ±35% beside 3 rounds within 1.28-1.42×, which is mostly the run's scatter.
    "" where the pair's fields do not give the split (not paired, or judged on other rounds than ``ratios``)."""
    noise, n = _num(v, "noise"), len(ratios)
    if not is_paired_basis(v.get("basis")) or not math.isfinite(noise) or noise <= 0 \
            or n != _num(v, "n_a") or n < 2:
        return ""
    d = np.log(np.asarray(ratios, float))
    t = _solve_typical(d, noise)
    if t is None:
        return ""
    own = math.sqrt(max(((PRIOR_DF + n - 1) * noise ** 2 - PRIOR_DF * t ** 2) / (n - 1), 0.0))
    # each part's share of the interval's variance, given: "mostly" said nothing where both scatters printed ±12%
    # (05), the typical one then weighing 4 rounds to the pair's 2 degrees of freedom
    weight = PRIOR_DF * t ** 2 / (PRIOR_DF * t ** 2 + (n - 1) * own ** 2)
    typical_part = weight >= 0.5
    typical = (f"the typical paired scatter of its group in this run ({scatter_text(t)} a round, counted as "
               f"{PRIOR_DF:g} rounds)")
    few = read_basis(v.get("basis"))
    aside = f"; {few[2]} more set aside as taken while the host ran slow" if few is not None else ""
    mine = f"these {n} rounds' own scatter ({scatter_text(own)}{aside})"
    (first, w1), (then, w2) = ((typical, weight), (mine, 1 - weight)) if typical_part else (
        (mine, 1 - weight), (typical, weight))
    return (f"it rests {w1:.0%} on {first} and {w2:.0%} on {then} (each one's share of its variance; "
            "docs/statistics.md)")


def basis_why(v: Mapping[str, Any]) -> str:
    """Why an interval is wide though its rounds may agree, where its basis is one :mod:`workbench.judge.few_rounds`
    wrote: "judged on 2 shared rounds at speed (1 set aside by the slow host), too few to pair: ..."; "" for any
    other basis. 10 printed "faster in every one of its 2 rounds (1.01-1.01×)" beside "its interval reaches ±50% or
    more", and nothing said the rounds left were so few or what the interval then rests on."""
    few = read_basis(v.get("basis"))
    if few is None:
        return ""
    rests = ("so few rounds lean on the typical paired scatter of its group in this run, which rounds that agree "
             "cannot narrow" if few[0] else
             "each side is judged on its own rounds, unpaired, so rounds that agree pair by pair do not narrow it")
    return f"judged on {v.get('basis')}: {rests}"


def one_way_text(v: Mapping[str, Any], base: str, other: str) -> str:
    """Where a pair's rounds all point one way though its interval spans no change: that, and why it still settles
    nothing; "" otherwise. Reads ``round_ratios`` (same run: one speed-up per round) or ``rounds_apart`` (two runs:
    the extreme ratios of their rounds), set by :func:`workbench.report.claims.mark_busy`. The interval is printed
    (where it can inform) in the rounds' direction, with the digits that show it spans 1, and what it rests on is
    said (:func:`interval_makeup`), not called the rounds' own scatter."""
    r = [float(x) for x in (v.get("round_ratios") or []) if np.isfinite(x) and x > 0]
    apart = v.get("rounds_apart")
    if len(r) >= 2 and (min(r) > 1 or max(r) < 1):
        lo, hi = min(r), max(r)
        who, by = (other, (lo, hi)) if lo > 1 else (base, (1 / hi, 1 / lo))
        chance = 2.0 ** (1 - len(r))   # every round one way, either way, with no difference at all
        shown = past_one_text(*by)
        if shown is None:
            return ""
        ci = (_num(v, "ci_low"), _num(v, "ci_high"))
        if all(math.isfinite(x) and x > 0 for x in ci) and not is_disturbed(_num(v, "floor")):
            ends = ci if lo > 1 else (1 / ci[1], 1 / ci[0])
            # the slower side's time over the faster's, as its sentence says it ("took 1.05× its time"), not "as
            # numpy's speed-up", which 01's reader read as the table's interval inverted
            interval = (f"its {interval_name(v)} ({interval_text(*ends)}"
                        + (f", {other}'s time over {base}'s" if lo < 1 else "") + ")")
        else:
            interval = "its interval"
        makeup = interval_makeup(v, r)
        outside = medians_outside_text(v, lo, hi, base, other)
        return (f"{who} was faster in every one of its {len(r)} rounds ({shown}"
                + (f"; {outside}" if outside else "") + f"), but {len(r)} "
                f"rounds all one way happen by chance {chance:.0%} of the time with no difference, and {interval} "
                "spans no change" + (f": {makeup}" if makeup else ""))
    if isinstance(apart, (tuple, list)) and len(apart) == 2 and (apart[0] > 1 or apart[1] < 1):
        lo, hi = float(apart[0]), float(apart[1])
        who, slow, by = (other, base, (lo, hi)) if lo > 1 else (base, other, (1 / hi, 1 / lo))
        shown = past_one_text(*by)
        if shown is None:
            return ""
        # what the interval rests on, as the pair's own figures split it (07 said "the scatter between runs ... is
        # wide enough" beside a hint that its own rounds make most of its noise: ±1.6% between runs, ±10% its own)
        cause = noise_cause(v)
        paired = is_paired_basis(v.get("basis"))
        rests = (cause if cause and not paired
                 else "its interval also carries the scatter between runs, which no cell's rounds can see")
        return (f"every round of {who} was faster than every round of {slow} ({shown}), but {rests}, and it spans "
                "no change")
    return ""


def pair_rounds(r: Mapping[str, Any], sides: pd.DataFrame) -> tuple[list[float], tuple[float, float] | None]:
    """(each shared round's speed-up, two runs' extreme round ratios) of one pair, from its two rows where each
    side has exactly one (:func:`~workbench.report.claims_cause.round_ratios`, :func:`rounds_apart`)."""
    if r.get("baseline_variant") is not None:   # a variant against its baseline in one run
        base = sides[(sides["variant"] == r.get("baseline_variant")) & (sides["backend"] == r.get("baseline_backend"))]
        other = sides[(sides["variant"] == r.get("variant")) & (sides["backend"] == r.get("backend"))]
        if len(base) == 1 and len(other) == 1 and base.index[0] != other.index[0]:
            return round_ratios(base.iloc[0].to_dict(), other.iloc[0].to_dict(), True), None
        return [], None
    if "run_id" in sides and len(sides) == 2 and sides["run_id"].nunique() == 2:   # one cell in two runs
        a, b = (x.to_dict() for _, x in sides.iterrows())
        m = _num(r, "median_a")   # side A: the row whose round medians' median is run A's
        near = [abs(math.log(float(pd.Series(parse_samples(x.get("round_medians_s"))).median()) / m))
                if math.isfinite(m) and len(parse_samples(x.get("round_medians_s"))) else math.inf for x in (a, b)]
        a, b = (a, b) if near[0] <= near[1] else (b, a)
        return [], rounds_apart(a, b)
    return [], None


def apart_undecided_text(v: Mapping[str, Any], base: str, other: str, said_cause: str = "",
                         wide: bool = False) -> str:
    """Why a pair could not be told apart although its cells' medians lie :data:`~workbench.judge.verdicts.
    DISTURBED_FLOOR` or more apart (1.5×): its paired rounds pointing both ways (``round_ratios``), or its paired
    ratio's scatter round to round (:func:`noise_cause`; not repeated where ``said_cause``, the sentence's cause,
    already gives it). 06 printed "could not tell float16 from float32" at 143 against 69.7 µs beside "float32 was
    faster ... at least 1.08×" at 799 against 399 µs, with nothing to reconcile the two. "" where the medians lie
    closer (or are not known), or the rounds all point one way (:func:`one_way_text` says that). The medians are
    the table's where the pair carries them (``table_median_a``/``_b``): 10 printed "263 µs for numba-graph" (its
    paired rounds' median) beside a table of 262 µs for that cell; a cell is quoted by one median."""
    a, b = _num(v, "table_median_a"), _num(v, "table_median_b")
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        a, b = _num(v, "median_a"), _num(v, "median_b")
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0) or not span_disturbed(min(a, b), max(a, b)):
        return ""
    # no side is named "the faster": the sentence ends "cannot say which was faster", and a disturbed comparison names
    # no fastest (readers of 01 and 04, 17:42: "numpy the faster" beside a cell the figure marks unreadable)
    # a disturbed comparison headlines no median ratio (docs/statistics.md): 07 printed "the cells' medians lie
    # 183.76× apart" beside "the comparison was disturbed", of a cell its figure crossed out
    # ``wide``: that wide for a reason that is no disturbance (two machines, :data:`~workbench.report.claims.TOO_WIDE`),
    # said in the word the table and the sentence's tail use (07 printed "a disturbed comparison" beside "too wide")
    # too few rounds at speed to pair (the slow host's set aside): no disturbance either, said as the table says it
    kind = ("a comparison too wide to read" if wide else
            "a comparison on too few rounds at speed" if too_few_words(v.get("basis")) else "a disturbed comparison")
    medians = (f"the cells' medians differ ({fmt_seconds(a)} for {base}, {fmt_seconds(b)} for {other}; {kind} "
               "reads no ratio from them)" if is_disturbed(v.get("floor")) else
               f"the cells' medians lie {max(a, b) / min(a, b):.2f}× apart ({fmt_seconds(a)} for {base}, "
               f"{fmt_seconds(b)} for {other})")
    r = [float(x) for x in (v.get("round_ratios") or []) if np.isfinite(x) and x > 0]
    if len(r) >= 2 and (min(r) > 1 or max(r) < 1):
        return ""
    cause = noise_cause(v)
    if len(r) >= 2:
        why = (f"its paired rounds point both ways ({min(r):.2f}× to {max(r):.2f}× as {other}'s speed-up over "
               f"{base}, {sum(x > 1 for x in r)} of {len(r)} rounds with {other} faster)")
    elif cause and cause not in said_cause:
        why = cause
    elif cause:
        why = "the noise its interval rests on, said here, spans that gap"
    else:
        why = "its paired interval reaches past no change"
    paired = is_paired_basis(v.get("basis"))   # two runs or machines: not paired (07)
    return f"{medians}, but {why}, so the {'paired ' if paired else ''}comparison cannot say which was faster"


def pair_medians(r: Mapping[str, Any], sides: pd.DataFrame) -> tuple[float, float]:
    """(base's, variant's) ``median_s`` as the table of the pair's rows prints them, where each side has exactly one
    row (a variant against its baseline in one run); NaNs otherwise. A pair's ``median_a``/``median_b`` are the
    medians of its paired rounds, which a table's medians (over all samples) need not equal (10: 2.9 ms against the
    table's 2.75 ms), so a sentence names both where they print otherwise
    (:func:`~workbench.report.pair_words.medians_source`)."""
    nan = float("nan")
    if r.get("baseline_variant") is None or "median_s" not in sides:
        return nan, nan
    base = sides[(sides["variant"] == r.get("baseline_variant")) & (sides["backend"] == r.get("baseline_backend"))]
    other = sides[(sides["variant"] == r.get("variant")) & (sides["backend"] == r.get("backend"))]
    if len(base) != 1 or len(other) != 1 or base.index[0] == other.index[0]:
        return nan, nan
    return _num(base.iloc[0], "median_s"), _num(other.iloc[0], "median_s")


def pair_quartiles_apart(r: Mapping[str, Any], sides: pd.DataFrame) -> str:
    """"faster" where every quartile of the variant's times lies below every one of its baseline's (its q3 under the
    baseline's q1), "slower" the other way, "" otherwise or where a side has no single row with both quartiles: the
    direction a comparison resting on a disturbed cell may say with its amount unreadable (01 printed "could not
    tell portable @ opencl-0 from numpy @ numpy" of medians ~25x apart, quartiles nowhere near)."""
    if r.get("baseline_variant") is None or not {"q1_s", "q3_s"} <= set(sides):
        return ""
    base = sides[(sides["variant"] == r.get("baseline_variant")) & (sides["backend"] == r.get("baseline_backend"))]
    other = sides[(sides["variant"] == r.get("variant")) & (sides["backend"] == r.get("backend"))]
    if len(base) != 1 or len(other) != 1 or base.index[0] == other.index[0]:
        return ""
    (b1, b3), (o1, o3) = ((_num(x.iloc[0], "q1_s"), _num(x.iloc[0], "q3_s")) for x in (base, other))
    if not all(math.isfinite(q) and q > 0 for q in (b1, b3, o1, o3)):
        return ""
    return "faster" if o3 < b1 else "slower" if b3 < o1 else ""


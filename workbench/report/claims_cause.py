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
from workbench.judge.verdicts import BLOCKS, effects, parse_samples, round_ids
from workbench.report.claims_rows import _num, json_list
from workbench.report.ratio_text import sigma_pct


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


def spread_text(rows: pd.DataFrame) -> str:
    """What the rows' own numbers show varied: a cell's rounds (its slowest round median over its fastest) and the
    host's speed probe between rounds ("" where the rows hold neither)."""
    parts = []
    widest = max((float(x.max() / x.min()) for x in (parse_samples(t) for t in rows.get(
        "round_medians_s", pd.Series(dtype=object))) if len(x) > 1), default=None)
    if widest is not None:
        parts.append(f"a cell's own rounds differed by up to {widest:.2f}× (its slowest round over its fastest)")
    probes = [float(max(p) / min(p)) for p in (json_list(t) for t in rows.get(
        "round_probes_s", pd.Series(dtype=object)).dropna()) if len(p) > 1 and min(p) > 0]
    if probes and max(probes) > 1.005:
        parts.append(f"the host's speed probe moved by up to {max(probes) - 1:.0%} between rounds")
    return "; ".join(parts)


def disturbance_text(rows: pd.DataFrame) -> str:
    """What made a comparison of ``rows`` too wide, said beside it: where the rows show a busy machine (other
    processes past :data:`~workbench.core.conditions.BUSY_CPU_SHARE` of the CPU), its load; where they show an idle
    one, what their own numbers show varied (:func:`spread_text`), the load after it as context, never as the
    cause; "" where no row says anything."""
    load, share = load_text(rows), busy_share(rows)
    if share is None or share > BUSY_CPU_SHARE:
        return load
    spread = spread_text(rows)
    idle = f"on a machine that was not busy ({load})"
    return f"{spread}, {idle}" if spread else f"not by a busy machine ({load})"


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
    if basis in ("paired rounds", BLOCKS):
        return f"its paired ratio varied by {scatter_text(noise)} round to round (one sigma, over {n} rounds)"
    if basis == "one stream":
        return f"one stream a side, whose drift is assumed ({scatter_text(noise)}, one sigma)"
    run = _num(v, "run_noise")
    if math.isfinite(run) and 0 < run <= noise:
        own = math.sqrt(max(noise ** 2 - run ** 2, 0.0))
        runs, rounds = f"the runs' scatter ({scatter_text(run)})", f"its own rounds' ({scatter_text(own)})"
        return (f"{runs} more than {rounds}" if run >= own else f"{rounds} more than {runs}") + (
            f", together {scatter_text(noise)} (one sigma)")
    return f"its rounds and the runs' scatter give it a noise of {scatter_text(noise)} (one sigma)"


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
    ia, ib = round_ids(base.get("round_ids")), round_ids(other.get("round_ids"))
    if ia and ib and len(ia) == len(a) and len(ib) == len(b):
        at = dict(zip(ib, b, strict=True))
        return [float(x / at[k]) for k, x in zip(ia, a, strict=True) if k in at]
    return [float(x / y) for x, y in zip(a, b, strict=True)] if len(a) == len(b) else []


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
            return f"{lo:.{decimals}f}-{hi:.{decimals}f}×"
    return None


def one_way_text(v: Mapping[str, Any], base: str, other: str) -> str:
    """Where a pair's rounds all point one way though its interval spans no change: that, and why it still settles
    nothing; "" otherwise. Reads ``round_ratios`` (same run: one speed-up per round) or ``rounds_apart`` (two runs:
    the extreme ratios of their rounds), set by :func:`workbench.report.claims.mark_busy`."""
    r = [float(x) for x in (v.get("round_ratios") or []) if np.isfinite(x) and x > 0]
    apart = v.get("rounds_apart")
    if len(r) >= 2 and (min(r) > 1 or max(r) < 1):
        lo, hi = min(r), max(r)
        who, by = (other, (lo, hi)) if lo > 1 else (base, (1 / hi, 1 / lo))
        chance = 2.0 ** (1 - len(r))   # every round one way, either way, with no difference at all
        shown = past_one_text(*by)
        if shown is None:
            return ""
        return (f"{who} was faster in every one of its {len(r)} rounds ({shown}), but {len(r)} "
                f"rounds all one way happen by chance {chance:.0%} of the time with no difference, and the interval "
                "the rounds' scatter gives spans no change")
    if isinstance(apart, (tuple, list)) and len(apart) == 2 and (apart[0] > 1 or apart[1] < 1):
        lo, hi = float(apart[0]), float(apart[1])
        who, slow, by = (other, base, (lo, hi)) if lo > 1 else (base, other, (1 / hi, 1 / lo))
        shown = past_one_text(*by)
        if shown is None:
            return ""
        return (f"every round of {who} was faster than every round of {slow} ({shown}), but "
                "the scatter between runs, which no cell's rounds can see, is wide enough that the interval spans "
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

"""Sentences that cannot outrun their measurement: a verdict in words, and a check that a claim follows it.

A tutorial or a report that writes its conclusion before the run ("fused beats unfused") contradicts its own
output the day the machine is busy. Here the words are chosen by the verdict (:mod:`workbench.judge.verdicts`), and
:func:`check_claim` fails when a sentence says something its verdict does not, or when the verdict does not
follow from the numbers it rests on (speed-up, interval, floor) — so prose and measurement cannot part silently.

The verdict is read as the text may state it (:func:`reading`): "faster", "slower", "same" (only within a
small floor: a "same" at ±300% means the noise hid any difference, and is said as "inconclusive"),
"inconclusive" (the noise or the interval does not settle it; rows judged before that verdict existed say
"ambiguous"), or "no call" (too few samples, no baseline, a failed cell). A pair whose paired estimate and the
ratio of its two cells' own medians disagree by more than the estimate's interval (:func:`medians_disagree`)
reads "inconclusive" whatever its verdict: two statistics of one comparison that part that far settle nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.backends.registry import get as backend_named
from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.core.status import Status
from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.disturbed import CELL_RULE, hint_after
from workbench.judge.few_rounds import too_few_words
from workbench.judge.verdicts import (
    BLOCKS,
    MIN_EFFECT,
    RERUN_HINT,
    SAME_WITHIN,
    is_disturbed,
    pct,
    rerun_hint,
    span_disturbed,
)
from workbench.report.claim_notes import Claim, clauses, one_way_parts
from workbench.report.claim_words import (  # noqa: F401  (re-exported)
    UNSETTLED_SIZES,
    busy_words,
    bytes_share,
    cache_place,
    cache_text,
    inner_caches,
    noisy_cells_text,
    opposite_medians,
    sizes_said,
)
from workbench.report.claims_cause import (  # noqa: F401  (re-exported)
    apart_undecided_text,
    basis_aside_text,
    basis_why,
    busy_share,
    cell_rerun_hint,
    disturbance_text,
    disturbed_rounds,
    noise_cause,
    one_way_text,
    pair_headlines,
    pair_medians,
    pair_quartiles_apart,
    pair_rounds,
)
from workbench.report.claims_rows import (  # noqa: F401  (re-exported: tutorials import them from here)
    BANDWIDTH_DOWN_NOTE,
    _num,
    bandwidth_down_text,
    bimodal_direction_text,
    bimodal_fields,
    disturbed_bimodal_direction,
    host_bandwidth,
    json_list,
    own_rounds_share,
    quartiles_wide,
    round_rates,
)
from workbench.report.disturbed_cells import disturbed_cells_text, noisy_count_text  # noqa: F401  (re-exported)
from workbench.report.pair_words import BAND_EDGES, apart_text, fmt_floor, medians_source  # noqa: F401
from workbench.report.pair_words import as_speed as _as_speed
from workbench.report.pair_words import unsettled_why as _unsettled_why
from workbench.report.printed_intervals import ClaimMismatch, check_printed_intervals  # noqa: F401
from workbench.report.ratio_text import (  # noqa: F401  (re-exported: tutorials import them from here)
    RatioPrecision,
    bound_text,
    estimate_text,
    flipped,
    interval_beside,
    interval_name,
    interval_text,
    inverse_text,
    same_band,
    sigma_pct,
    table_ratio,
)
from workbench.report.runs_needed import is_runs_hint
from workbench.report.verdict_reading import (  # noqa: F401  (re-exported: tutorials and tests import them from here)
    DIRECTION_MARGIN,
    MEDIANS_TOLERANCE,
    SAME_MAX_FLOOR,
    Reading,
    comparison_disturbed,
    may_state_cause,
    medians_disagree,
    medians_ratio,
    reading,
    rests_on_disturbed,
    settled,
    settled_direction,
)
from workbench.report.verdict_tables import shown_verdicts, verdict_table  # noqa: F401  (re-exported)

#: The phrase :func:`verdict_sentence` uses for each reading; :func:`check_claim` looks for these.
PHRASES: dict[str, str] = {
    "faster": "× faster than",
    "slower": "was faster:",
    "same": "ran the same within",
    "inconclusive": "could not tell",
    "no call": "no call between",
    "direction": "the size of the gap is not settled",
    "disturbed cell": "rests on a disturbed cell",
}
#: The phrase a sentence on a disturbed comparison carries (:func:`verdict_sentence`, past
#: :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`): its interval is not printed.
DISTURBED = "was disturbed"
#: Said after :data:`DISTURBED` where neither cell of the pair reads disturbed: a disturbed *comparison* (its interval
#: reaches ±50%) is not a disturbed *cell* (its quartiles half its median apart), and 01/03/08 printed the one beside
#: two cells that were not the other, unexplained (docs/statistics.md, "Disturbed comparisons").
CALM_CELLS = ("the comparison, not its cells: its interval reaches ±50% or more, while neither cell's own quartiles "
              "lie half its median apart")
#: The phrase a sentence carries instead, where its interval is that wide for a reason that is no disturbance
#: (``wide_because``: two machines' cells scatter around their common ratio; 07 called that scatter "disturbed").
TOO_WIDE = "is too wide to read"
#: The phrase a sentence carries instead of :data:`DISTURBED` where its interval is that wide because too few rounds
#: were left at speed to pair and no typical scatter stood in (:func:`~workbench.judge.few_rounds.too_few_words`),
#: unless its cause (:func:`~workbench.report.claims_cause.noise_cause`) says so itself: an assumed drift, no
#: disturbance (05 read "the comparison was disturbed" beside two rounds 1.35-1.45x apart,
#: neither cell noisy, on a machine it said was not busy).
TOO_FEW = "no amount is read from its rounds at speed"

#: What could settle an inconclusive comparison, said with it. "Could", not "would": no printed number shows what a
#: rerun's noise will be (01 and 03 promised an idle rerun "would settle" a ~5% effect whose idle floor nothing showed
#: under 5%).
SETTLE = "more rounds or a quieter machine could settle it"
#: The same on a machine its rows show was not busy (:func:`machine_busy` False): a quieter machine is not the cure.
SETTLE_IDLE = "more rounds could settle it"
#: The same where the rows show a busy machine: the advice a disturbed sentence gives there
#: (:data:`~workbench.judge.verdicts.BUSY_RERUN_HINT`), so that two cells of one run do not advise more rounds in one
#: and warn against them in the next (05, one core busy).
SETTLE_BUSY = ("a rerun while the machine is otherwise idle could settle it (more rounds on a busy machine add its "
               "disturbance too)")
#: Where the interval is narrower than the ±5% band and only its edge leaves the pair open: what more rounds would
#: decide (08 printed "more rounds would say on which side of 5% it lies" of an estimate of 1.00×).
SETTLE_AT_BAND = (f"more rounds would narrow its interval and could say whether the difference is within "
                  f"±{pct(SAME_WITHIN)} (the same) or not")
#: The same on a machine the rows show busy: no more rounds, which add its disturbance (10 printed both advices).
SETTLE_AT_BAND_BUSY = (f"a rerun while the machine is otherwise idle could say whether the difference is within "
                       f"±{pct(SAME_WITHIN)} (the same) or not (more rounds on a busy machine add its disturbance too)")
#: The phrase a sentence carries where the paired estimate and the cells' own medians disagree
#: (:func:`medians_disagree`); the basis ("paired blocks" / "paired rounds") is put in front of it.
DISAGREE = "and the cells' own rounds disagree"
#: What to do about such a pair, said with it.
DISAGREE_HINT = (f"not settled; {RERUN_HINT}; if they still part, each side runs differently beside the other than "
                 "alone (docs/statistics.md, 'When the paired estimate and the medians disagree')")


def disagree_hint(busy: bool | None) -> str:
    """:data:`DISAGREE_HINT` with the rerun advice the rows' machine state allows (:func:`rerun_hint`)."""
    return DISAGREE_HINT.replace(RERUN_HINT, rerun_hint(busy))


def ratio_text(lo: float, hi: float) -> str:
    """A range of ratios as one figure where its ends print alike ("1.4×", never "1.4-1.4×"), else "1.35-1.39×";
    always with "×" and three significant digits at most."""
    a, b = f"{lo:.3g}", f"{hi:.3g}"
    return f"{a}×" if a == b else f"{a}-{b}×"


def machine_busy(rows: pd.DataFrame) -> bool | None:
    """Whether ``rows`` were measured on a busy machine: other processes took more than the harness's
    :data:`~workbench.core.conditions.BUSY_CPU_SHARE` of the CPU in some row (the threshold the rows' own noisy
    mark uses); None where no row says. Decides whether a rerun hint may blame other work."""
    share = busy_share(rows)
    return None if share is None else share > BUSY_CPU_SHARE


def mark_busy(table: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``table`` (a speed-up table) with a ``busy`` column: per pair, :func:`machine_busy` of the rows of its two
    sides (same variant and backend, or the baseline's, at its size), which :func:`verdict_sentence` reads to
    choose its rerun hint; and ``disturbed_by`` (:func:`disturbance_text` of those rows), which a disturbed
    sentence names where its caller gave no cause (04 printed "the comparison was disturbed" and not by what); and
    ``table_median_a``/``_b``, the medians the rows' table prints (:func:`pair_medians`); ``cells_disturbed``, how
    many of its cells read disturbed (:func:`~workbench.report.claims_rows.quartiles_wide`), so that a disturbed
    comparison of two cells that are not says so (:data:`CALM_CELLS`), and one that rests on a disturbed cell reads
    "disturbed" (:func:`rests_on_disturbed`); ``disturbed_cells``, those cells by name ("numba @ numba")."""
    out = table.copy()
    if out.empty:
        out["busy"], out["disturbed_by"], out["round_ratios"], out["rounds_apart"] = None, "", None, None
        out["cells_disturbed"], out["disturbed_cells"], out["quartiles_apart"] = None, "", ""
        out["disturbed_rounds"] = float("nan")
        out["table_median_a"], out["table_median_b"] = float("nan"), float("nan")
        out["headline_a"], out["headline_b"] = "", ""
        return out
    share = pd.to_numeric(rows.get("other_cpu_share", pd.Series(float("nan"), index=rows.index)), errors="coerce")
    key = "size_label" if "size_label" in rows and "size_label" in out else None
    busy, by, rounds, medians, wide, heads, names, apart, spans = [], [], [], [], [], [], [], [], []
    for r in out.to_dict("records"):
        sides = (((rows["variant"] == r.get("variant")) & (rows["backend"] == r.get("backend")))
                 | ((rows["variant"] == r.get("baseline_variant")) & (rows["backend"] == r.get("baseline_backend"))))
        if key:
            sides &= rows[key] == r.get(key)
        seen = share[sides].dropna()
        busy.append(None if seen.empty else bool(seen.max() > BUSY_CPU_SHARE))
        by.append(disturbance_text(rows[sides]))
        rounds.append(pair_rounds(r, rows[sides]))
        medians.append(pair_medians(r, rows[sides]))
        heads.append(pair_headlines(r, rows[sides]))   # which rounds each headline leaves out
        wide.append(_cells_disturbed(rows[sides].to_dict("records")))
        names.append(_disturbed_names(rows[sides].to_dict("records")))
        apart.append(pair_quartiles_apart(r, rows[sides]))
        spans.append(disturbed_rounds(rows[sides]))   # cell_rerun_hint: its rounds agree, or more rounds help
    out["busy"], out["disturbed_by"], out["cells_disturbed"] = busy, by, wide
    out["disturbed_cells"], out["quartiles_apart"], out["disturbed_rounds"] = names, apart, spans
    out["table_median_a"], out["table_median_b"] = [x[0] for x in medians], [x[1] for x in medians]
    out["headline_a"], out["headline_b"] = [x[0] for x in heads], [x[1] for x in heads]
    out["round_ratios"], out["rounds_apart"] = [x[0] for x in rounds], [x[1] for x in rounds]
    return out


def _cells_disturbed(cells: list[dict[str, Any]]) -> int | None:
    """How many of a pair's cells read disturbed (:func:`quartiles_wide`); None where a cell's spread is not known."""
    known = [c for c in cells if math.isfinite(_num(c, "median_s"))
             and (math.isfinite(_num(c, "iqr_s")) or math.isfinite(_num(c, "q3_s") - _num(c, "q1_s")))]
    return sum(quartiles_wide(c) for c in cells) if cells and len(known) == len(cells) else None


def _disturbed_names(cells: list[dict[str, Any]]) -> str:
    """"numba @ numba and portable @ opencl-0": the pair's cells that read disturbed, by name, in the pair's order;
    "" where the name does not tell the pair's sides apart (two runs of one variant: 07 read "numba @ numba's cell"
    of a run A against run B pair, both numba @ numba)."""
    names = [f"{c.get('variant')} @ {c.get('backend')}" for c in cells]
    crossed = [n for n, c in zip(names, cells, strict=True) if quartiles_wide(c)]
    return "" if len(set(names)) < len(names) else " and ".join(crossed)


def _busy_of(v: Mapping[str, Any]) -> bool | None:
    b = v.get("busy")
    return None if b is None or (isinstance(b, float) and math.isnan(b)) else bool(b)


#: The rerun advice for a comparison between two runs: their run-to-run noise shrinks with runs, not rounds. Kept
#: for callers that know no scatter; :func:`~workbench.report.runs_needed.runs_rerun_hint` says how many runs.
RUNS_RERUN_HINT = ("run each side again and compare several runs a side (workbench compare A1,A2,A3 B1,B2,B3): "
                   "the noise between runs shrinks with runs, not with rounds")


def verdict_sentence(v: Mapping[str, Any], base: str, other: str, disturbed_by: str = "",
                     rerun: str | None = None, busy: bool | None = None, wide_because: str = "") -> str:
    """``other`` against ``base`` in one sentence: :func:`verdict_claim`'s whole text (head and reasons)."""
    return verdict_claim(v, base, other, disturbed_by, rerun, busy, wide_because).text()


def verdict_claim(v: Mapping[str, Any], base: str, other: str, disturbed_by: str = "",
                  rerun: str | None = None, busy: bool | None = None, wide_because: str = "") -> Claim:
    """``other`` against ``base`` in words, chosen by the verdict (speed-up = time(base) / time(other)), as a
    :class:`~workbench.report.claim_notes.Claim`: its head (the verdict, its number or bound, and the phrase
    :func:`check_claim` looks for) and its reasons, which a :class:`~workbench.report.claim_notes.NoteBlock` says
    once under a list of verdicts; ``.text()`` is the whole sentence.

    Past :data:`~workbench.judge.verdicts.DISTURBED_FLOOR` no interval or floor is printed: the sentence says
    the comparison was disturbed, by what (``disturbed_by``: :func:`disturbance_text` of the rows), and how to
    rerun; a settled direction keeps only the bound its interval guarantees ("at least 1.80× faster"). ``rerun``
    replaces the rerun advice, in every sentence, where more rounds on a quieter machine are not what would settle
    it (two machines compared: their kernels' ratios differ, which no idle rerun removes; two runs compared:
    :data:`RUNS_RERUN_HINT`). ``busy`` (else the pair's ``busy`` field, from
    :func:`mark_busy` / :func:`pair_verdicts`) says whether the rows showed a busy machine: only then does the
    advice name other work ("while the machine is otherwise idle"); on an idle one the disturbed sentence names
    what its numbers show varied (:func:`~workbench.report.claims_cause.noise_cause`), the load only as context."""
    s, floor, said = _num(v, "speedup"), _num(v, "floor"), reading(v)
    busy = _busy_of(v) if busy is None else busy
    given, hint = rerun, rerun_hint(busy) if rerun is None else rerun
    if said == "inconclusive" and rests_on_disturbed(v):   # a side the figure crosses out: no ratio
        by = disturbed_by or str(v.get("disturbed_by") or "")
        return _disturbed_cell_sentence(v, base, other, by, hint if given else cell_rerun_hint(v, busy, hint))
    if said in ("faster", "slower", "inconclusive") and is_disturbed(floor):
        by = disturbed_by or str(v.get("disturbed_by") or "")   # the pair's own rows' load (mark_busy)
        few = bool(too_few_words(v.get("basis")))   # too few rounds at speed: its assumed drift said, whatever the load
        by = "; ".join(x for x in (noise_cause(v), by) if x) if busy is False or few else by
        return _disturbed_sentence(v, said, base, other, by, hint_after(by, hint), wide_because)
    direction = settled_direction(v)
    if direction is not None:   # every estimate on one side, past the band: who was faster is settled
        return _direction_sentence(v, direction, base, other, hint)
    if v.get("bimodal_note"):   # a cell whose rounds fell in two modes: its ratio says which mode it drew
        head = f"could not tell {other} from {base}"
        return Claim(f"{head}: the ratio ({s:.2f}× paired) depends on which mode each round fell in: not settled",
                     (str(v["bimodal_note"]), hint),
                     f"{head}: {v['bimodal_note']}, so the ratio ({s:.2f}× paired) depends on which mode each round "
                     f"fell in: not settled; {hint}")
    if medians_disagree(v):
        return _disagree_claim(v, base, other, busy, given, hint)
    return _settled_claim(v, said, base, other, busy, given)


def _disagree_claim(v: Mapping[str, Any], base: str, other: str, busy: bool | None, given: str | None,
                    hint: str) -> Claim:
    """A pair whose paired estimate and cells' own medians disagree (:func:`medians_disagree`): both figures, each
    with its direction, and what to do about it."""
    s, basis = _num(v, "speedup"), str(v.get("basis") or "paired estimate")
    hint = (disagree_hint(busy) if given is None else f"not settled; {given}") if basis == BLOCKS else (
        f"not settled; {hint} (paired round by round, a few rounds far apart pull the two figures apart)")
    # each figure said with its direction (08: "1.07× paired against 0.98× from the medians" left the reader
    # to guess who was faster by which)
    head = (f"could not tell {other} from {base}: the {basis} {DISAGREE} ({_as_speed(other, s)} paired, "
            f"{_as_speed(other, medians_ratio(v))} from the medians{_named(v)})")
    return Claim(head, clauses(hint), f"{head}: {hint}")


def _settled_claim(v: Mapping[str, Any], said: Reading, base: str, other: str, busy: bool | None,
                   given: str | None) -> Claim:
    """A pair read faster, slower, the same, inconclusive within an interval that informs, or no call."""
    s, floor, lo, hi = _num(v, "speedup"), _num(v, "floor"), _num(v, "ci_low"), _num(v, "ci_high")
    if said == "faster":
        return Claim(f"{other} ran {estimate_text(s, lo, hi)} faster than {base}{_settled_aside(v, s, False)}")
    if said == "slower":
        return Claim(f"{base} was faster: {other} took {inverse_text(s, lo, hi)} its time"
                     f"{_settled_aside(v, s, True)}")
    if said == "same":
        return Claim(_same_sentence(v, base, other))
    if said == "inconclusive":
        advice = given or (SETTLE_IDLE if busy is False else SETTLE_BUSY if busy else SETTLE)
        if 0 < lo <= hi and hi / lo <= (1 + MIN_EFFECT) ** 2 and not is_runs_hint(given):
            # an interval narrower than the 5% band, stopped at its edge: noise is not what left it open, so a
            # quieter machine is not the cure (08 busy: "interval (0.947×-0.978×) … rerun while otherwise idle")
            advice = SETTLE_AT_BAND_BUSY if busy else SETTLE_AT_BAND
        why, opposite = _unsettled_why(other, s, lo, hi, floor, interval_name(v)), opposite_medians(v, s, other)
        one_way = one_way_text(v, base, other) if lo <= 1 <= hi else ""
        head = f"could not tell {other} from {base}: {why}{opposite}"
        # the head keeps the estimate; where its interval sits against the band, and medians pointing the other way,
        # go to the notes (05 printed a head of 53 words)
        measured, at_band, band = why.partition(": its ")
        shown = band.split(") ", 1)[0].replace(" (", " ", 1) + ")" if at_band else ""   # "97.5% interval 1.02×-1.07×)"
        notes = (f"its {band}" if at_band else "", opposite.strip()[1:-1], *one_way_parts(one_way), advice)
        return Claim(f"could not tell {other} from {base}: {f'{measured} ({shown}' if at_band else why}",
                     tuple(x for x in notes if x), f"{head}{'; ' + one_way if one_way else ''}; {advice}")
    return Claim(f"no call between {other} and {base}: {v.get('verdict')}")


def _same_sentence(v: Mapping[str, Any], base: str, other: str) -> str:
    """A pair that reads "same" (:func:`reading`): by its interval, and as measurably apart where that interval
    excludes 1 but lies within the ±5% band."""
    s, lo, hi = _num(v, "speedup"), _num(v, "ci_low"), _num(v, "ci_high")
    if lo > 1 or hi < 1:   # measurably apart, but by less than "same" allows: said as such, not as noise
        apart = apart_text(s, lo, hi, interval_name(v))
        return (f"{other} and {base} ran the same within ±{pct(SAME_WITHIN)}: {other} was {apart}, "
                f"measurably but inside the ±{pct(SAME_WITHIN)} we call the same")
    # the interval, not the floor (never under the ±5% band: "floor ±5.0%" beside ±2% read as a contradiction)
    return (f"{other} and {base} ran the same within ±{pct(SAME_WITHIN)}: the whole {interval_name(v)} "
            f"({interval_text(lo, hi, same_band())}, {estimate_text(s, lo, hi)} measured) lies inside it")


#: A settled sentence names the cells' own medians beside its paired figure where the two differ by more than this
#: (relative): a reader who divides the medians in the table then finds the number the sentence did not quote.
MEDIANS_ASIDE = 0.03


def _named(v: Mapping[str, Any]) -> str:
    """" (2.9 ms / 2.65 ms ...)": the medians a "from the medians" figure divides (:func:`medians_source`), so a
    reader who divides the table's medians is not left with another figure unexplained (10)."""
    said = medians_source(v)
    return f" ({said})" if said else ""


def _settled_aside(v: Mapping[str, Any], s: float, slower: bool) -> str:
    """A settled pair's interval, in the sentence's own direction (08: "torch ran 1.5x faster" printed no
    interval, and the reader could not tell how well 1.5 was known); where the medians' ratio lies just past the
    interval (within :data:`MEDIANS_TOLERANCE`, else the pair reads "not settled") and prints differently from
    the paired speed-up ``s``, that ratio too: " (interval 1.42×-1.58×; the cells' own medians give 1.6×, within
    1.0% of its high end)"."""
    lo, hi = _num(v, "ci_low"), _num(v, "ci_high")
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi):
        return ""
    figure = inverse_text(s, lo, hi) if slower else estimate_text(s, lo, hi)   # the estimate the sentence prints
    said = f"{interval_name(v)} {interval_beside(figure, *(flipped(lo, hi) if slower else (lo, hi)))}"
    m = medians_ratio(v)
    if math.isfinite(m) and m > 0:
        shown = inverse_text(m, lo, hi) if slower else estimate_text(m, lo, hi)
        paired = inverse_text(s, lo, hi) if slower else estimate_text(s, lo, hi)
        # named wherever the two print differently (08 read "took 1.05x" beside medians giving 1.04x, unnamed),
        # as what the interval holds, not as a second figure for the claim (01: "two numbers for one claim")
        # inside the interval they are one of the values it holds, and a second figure in the sentence only
        # invites a reader to reconcile two roundings (idle readers: "1.3x paired vs 1.4x medians", 1.34 vs 1.35);
        # just past it (within the tolerance that keeps the pair settled), that is said
        if shown != paired and not lo <= m <= hi:
            said += (f"; the cells' own medians{_named(v)} give {shown}, within {pct(MEDIANS_TOLERANCE)} of its "
                     f"{'low' if (m < lo) != slower else 'high'} end")
    return f" ({said})"


def _direction_sentence(v: Mapping[str, Any], direction: tuple[str, float, float], base: str, other: str,
                        hint: str = RERUN_HINT) -> Claim:
    """Who was faster, by the range its estimates span (by the least of them where they span more than
    :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`: "2.65-6.37×" is no finding), and that the size is not
    settled (and why)."""
    way, lo, hi = direction
    winner, by = (other, ratio_text(lo, hi)) if way == "faster" else (base, ratio_text(1 / hi, 1 / lo))
    parts = [f"{v['bimodal_note']}, every mode on the same side"] if v.get("bimodal_note") else []
    disagree = ""
    if medians_disagree(v):
        basis = str(v.get("basis") or "paired estimate")
        disagree = f"the {basis} {DISAGREE} on how much"   # in the head too: check_claim looks for it there
        parts.append(f"{disagree} ({_num(v, 'speedup'):.3g}× paired against "
                     f"{medians_ratio(v):.3g}× from the medians{_named(v)}, both as {other} against {base})")
    why = "; ".join(parts) or "its estimates part"
    reasons = (*parts, hint) if parts else (hint,)
    aside = f" ({disagree})" if disagree else ""
    if span_disturbed(lo, hi):
        # a range this wide is no finding, and its low end is no bound: it is one estimate (often one mode's median
        # of a bimodal side, 06's "by at least 1.41x"), with no interval of its own; the direction alone is said
        every = "every estimate (the paired speed-up, the medians' ratio" + (
            " and each mode of the rounds)" if v.get("bimodal_note") else ")")
        head = f"{winner} ran faster by {every}, by how much is unknown: {PHRASES['direction']}"
        return Claim(head + aside, reasons, f"{head} ({why}); {hint}")
    # two estimates, not an interval: "by 1.22-1.59x" read as one (11); each named as what it is
    ends = by[:-1].split("-") if by.endswith("×") and by.count("-") == 1 else None
    by = f"{ends[0]}× by one estimate and {ends[1]}× by the other" if ends else by
    head = f"{winner} ran faster, by {by}: {PHRASES['direction']}"
    return Claim(head + aside, reasons, f"{head} ({why}); {hint}")


#: Why a comparison resting on a disturbed cell says no ratio, in the figure's words (its legend): the figure draws
#: its quartiles only, an x at each, and no mark at the median it calls no value to read (01, 05).
CELL_CROSSED = "its median is no value to read (the figure draws it as an x at each quartile, none at its median)"


def _disturbed_cell_sentence(v: Mapping[str, Any], base: str, other: str, by: str, rerun: str) -> Claim:
    """A comparison resting on a disturbed cell (:func:`rests_on_disturbed`): "disturbed", as its table reads, which
    cell, the rule it broke, what disturbed it (``by``) and how to rerun; no ratio, interval or cause. Never "could not
    tell": 01 printed "could not tell portable @ opencl-0 from numpy @ numpy" of cells ~25x apart. Where every
    quartile of one side lies beyond the other's (``quartiles_apart``, :func:`mark_busy`), who was faster is said,
    its amount not readable."""
    n = int(_num(v, "cells_disturbed"))
    named = str(v.get("disturbed_cells") or "")
    way = str(v.get("quartiles_apart") or "")
    winner, loser = (other, base) if way == "faster" else (base, other)
    apart = f"every quartile of {winner}'s times lies below every quartile of {loser}'s"
    ordered = way in ("faster", "slower")
    direction = f"; {winner} was faster than {loser}, the amount not readable: {apart}" if ordered else ""
    head = f"{other} against {base}: the comparison {DISTURBED}, as it {PHRASES['disturbed cell']}" + (
        f" ({named}'s cell)" if named and n == 1 else f" (the cells of {named})" if named
        else " (one of its cells)" if n == 1 else f" ({n} of its cells)")
    short = head + (f"; {winner} was faster, the amount not readable" if ordered else "")
    # one note for the rule and what follows from it, said once; the head names the cell (01 printed "[1] portable's
    # cell reads disturbed, since ... (its IQR ...)" and "[2] its median is no value to read ...", both the head's)
    rule = f"a cell reads disturbed where {CELL_RULE.split(' (')[0]}: {CELL_CROSSED}, so no ratio is read from it"
    by = "; ".join(x for x in (basis_aside_text(v, by), by) if x)   # a round the host probe set aside (01)
    reasons = (rule, *((apart,) if ordered else ()), *clauses(by, hint_after(by, rerun)))
    return Claim(short, reasons, f"{head}: {rule}{direction}{f' ({by})' if by else ''}: {hint_after(by, rerun)}")


def _disturbed_sentence(v: Mapping[str, Any], said: Reading, base: str, other: str, by: str,
                        rerun: str = RERUN_HINT, wide_because: str = "") -> Claim:
    """A comparison whose interval is too wide to inform: its direction where settled (as the bound its
    interval guarantees), else no number at all; what disturbed it (or, ``wide_because``, why it is that wide
    without a disturbance) and how to rerun."""
    lo, hi = _num(v, "ci_low"), _num(v, "ci_high")
    # the basis a wide interval on few rounds rests on (claims_cause.basis_why: 10 printed "±50% or more" beside two
    # rounds 1% apart, and not that they were too few to pair)
    few = too_few_words(v.get("basis"))
    # too few rounds at speed: no disturbance to explain (CALM_CELLS), and its basis said once, by noise_cause in
    # ``by`` (04 printed "too few of its rounds were left at speed to pair (2 shared, 1 set aside ...)" and then
    # "judged on 2 shared rounds at speed (1 set aside by the slow host), too few to pair")
    causes = [x for x in (by, CALM_CELLS if _num(v, "cells_disturbed") == 0 and not few else "",
                          "" if few and "too few" in by else basis_why(v)) if x]
    cause = f" ({'; '.join(causes)})" if causes else ""
    tail = (f"the comparison's interval {TOO_WIDE} ({wide_because}): {rerun}" if wide_because
            else f"{'; '.join(causes)}: {rerun}" if few and "too few" in by
            else f"{TOO_FEW}{cause}: {rerun}" if few else f"the comparison {DISTURBED}{cause}: {rerun}")
    # the head keeps the tail's marking phrase (check_claim reads it there); its causes and advice go to the notes
    mark = (f"the comparison's interval {TOO_WIDE}" if wide_because else "" if few and "too few" in by
            else TOO_FEW if few else f"the comparison {DISTURBED}")
    reasons = ((wide_because,) if wide_because else tuple(causes)) + (rerun,)
    if said in ("faster", "slower"):
        head = (f"{other} ran at least {bound_text(lo)} faster than {base}, by how much is unknown" if said == "faster"
                else f"{base} was faster: {other} took at least {bound_text(1 / hi)} its time, by how much is unknown")
        return Claim(f"{head}: {mark}" if mark else head, reasons, f"{head}: {tail}")
    direction = settled_direction(v)
    if direction is not None:   # a bimodal side, every mode one way past the noise: the direction, no size
        head = f"{bimodal_direction_text(v, direction[0], base, other)}; {PHRASES['direction']}"
        return Claim(f"{head}; {mark}" if mark else head, reasons, f"{head}; {tail}")
    # a bimodal side, rounds all one way, or medians far apart that the paired rounds still cannot order: said
    one_way = one_way_text(v, base, other)   # its cause, where it names one, is not said twice (07)
    # a gap between the cells' medians is explained only where both medians can be read: 07 quoted "23 µs for run A"
    # beside its own note that run A's cell is disturbed, "its median is no value to read" (mark_busy counts them)
    readable = not _num(v, "cells_disturbed") > 0
    why = [x for x in (str(v.get("bimodal_note") or ""), one_way,
                       apart_undecided_text(v, base, other, f"{by}; {one_way}", bool(wide_because)) if readable
                       else "") if x]
    head = f"could not tell {other} from {base}"
    notes = tuple(x for w in why for x in (one_way_parts(w) if w == one_way else (w,)))
    return Claim(f"{head}: {mark}" if mark else head, (*notes, *reasons), f"{head}: {'; '.join([*why, tail])}")


def check_verdict(v: Mapping[str, Any]) -> None:
    """Raise :class:`ClaimMismatch` unless the verdict follows from its speed-up, interval and floor."""
    said = reading(v)
    s, lo, hi, floor = (_num(v, k) for k in ("speedup", "ci_low", "ci_high", "floor"))
    if said == "no call":
        return
    numbers = {"verdict": v.get("verdict"), "speedup": s, "ci_low": lo, "ci_high": hi, "floor": floor}
    if not all(math.isfinite(x) for x in (s, lo, hi, floor)) or s <= 0:
        raise ClaimMismatch(f"a {said!r} verdict without its numbers: {numbers}")
    # faster / slower: the interval excludes no change and the effect exceeds the smallest effect ever called;
    # same: the effect lies within a small floor; inconclusive: neither a direction nor "same" was shown
    margin = math.log1p(MIN_EFFECT) - 1e-9
    beyond = abs(math.log(s)) > math.log1p(floor) + 1e-9
    held = {"faster": math.log(s) > margin and lo > 1,
            "slower": math.log(s) < -margin and hi < 1,
            "same": not beyond and floor <= SAME_MAX_FLOOR,
            "inconclusive": medians_disagree(v) or bool(v.get("bimodal_note")) or rests_on_disturbed(v)
            or not (beyond and (lo > 1 or hi < 1))}[said]
    if not held:
        raise ClaimMismatch(f"the verdict does not follow from its numbers: {numbers}")


def check_claim(v: Mapping[str, Any], sentence: str, phrases: Mapping[str, str] | None = None) -> None:
    """Raise :class:`ClaimMismatch` unless ``sentence`` says what the verdict says and the verdict follows from
    its numbers (:func:`check_verdict`).

    ``phrases`` maps a reading ("faster", "slower", "same", "inconclusive", "no call") to a phrase that the
    sentence contains exactly when the verdict reads so: by default the wording of :func:`verdict_sentence`;
    pass your own for a sentence of your own, e.g. ``{"faster": "tiling pays"}``.
    """
    check_verdict(v)
    said = reading(v)
    check_printed_intervals(sentence)
    table = PHRASES if phrases is None else phrases
    meaning_said: str = "direction" if said == "inconclusive" and "direction" in table and settled_direction(v) \
        else "disturbed cell" if said == "inconclusive" and "disturbed cell" in table and rests_on_disturbed(v) \
        else said
    for meaning, phrase in table.items():
        if (phrase in sentence) != (meaning == meaning_said):
            says = "says" if phrase in sentence else "does not say"
            raise ClaimMismatch(f"{sentence!r} {says} {phrase!r}, but the verdict reads {said!r} "
                                f"({v.get('verdict')}, speed-up {_num(v, 'speedup'):.3g}, "
                                f"floor {fmt_floor(_num(v, 'floor'))}"
                                + (f"; it rests on a disturbed cell, {v.get('disturbed_cells') or 'one of its two'})"
                                   if rests_on_disturbed(v) else ")"))
    disturbed = comparison_disturbed(v)
    marked = DISTURBED in sentence or TOO_WIDE in sentence
    if phrases is None and marked != disturbed:
        raise ClaimMismatch(f"{sentence!r} {'says' if marked else 'does not say'} {DISTURBED!r} (or {TOO_WIDE!r}), "
                            f"but the comparison's floor is {fmt_floor(_num(v, 'floor'))} and "
                            f"{int(_num(v, 'cells_disturbed')) if rests_on_disturbed(v) else 'none'} of its cells "
                            "read disturbed")
    parted = medians_disagree(v) and not disturbed
    if phrases is None and (DISAGREE in sentence) != parted:
        raise ClaimMismatch(f"{sentence!r} {'says' if DISAGREE in sentence else 'does not say'} {DISAGREE!r}, "
                            f"but the medians give {medians_ratio(v):.3g}× against the interval "
                            f"{_num(v, 'ci_low'):.3g}-{_num(v, 'ci_high'):.3g}×")


def pair_verdicts(df: pd.DataFrame, base: str, other: str, backend: str) -> pd.DataFrame:
    """Variant ``other`` against variant ``base`` on one backend, one row per size, with the package's paired
    verdict (:func:`workbench.judge.compare.speedup_vs_baseline`; speed-up above 1: ``other`` is faster). Judged
    among all the run's rows, so that its typical paired scatter comes from the same scopes as in the run's table:
    08, given only the pair's rows, read one pair of a group on an assumed ±16% drift and the other on the group's."""
    ok = df[df["status"] == Status.OK]
    table = speedup_vs_baseline(ok, baseline_variant=base, baseline_backend=backend)
    rows = ok[(ok["backend"] == backend) & ok["variant"].isin([base, other])]
    return mark_busy(table[(table["variant"] == other) & (table["backend"] == backend)], rows)


def last_level_cache_bytes(backend: str) -> int | None:
    """The last-level cache of a backend's device, in bytes (None where the device does not say)."""
    adapter = backend_named(backend)
    adapter.require()
    return adapter.device_info().to_dict().get("last_level_cache_bytes")


def busy_text(rows: pd.DataFrame) -> str:
    """"other processes used up to 85% of the CPU while these cells ran" where that share made the machine
    busy (the harness's :data:`~workbench.core.conditions.BUSY_CPU_SHARE`), else "": said beside a result that
    a loaded machine can distort, so the reader knows whether this run was one."""
    share = busy_share(rows)
    if share is None or share <= BUSY_CPU_SHARE:
        return ""
    # what the share is of, and that our own processes are not in it (04: "76% of the CPU" beside one busy core)
    from workbench.report.busy_caveat import share_words

    return f"other processes used up to {share_words(share)} while these cells ran"



"""When a comparison is "disturbed": an interval or spread too wide to inform (±50% or more), and the rerun advice
printed instead of it. Apart from :mod:`workbench.judge.verdicts` (which re-exports every name here) so the one edge
every such test uses lives in one small place."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Past this half-width an interval cannot inform (±50%: a speed-up anywhere from 0.67× to 1.5×): the
#: comparison is said to be disturbed, its interval is not printed, and the words say what disturbed it and how
#: to rerun (:func:`is_disturbed`, :data:`RERUN_HINT`). Intervals of ±1,361% and ±371,597,614% had been printed
#: as findings under load.
DISTURBED_FLOOR = 0.5
#: No command: the hint does not know the cell's flags ("workbench bench ... --rounds 10" could not be copied, 06).
#: Both forms, since a tutorial measures through :func:`workbench.benchmark` (its ``rounds`` parameter): 05 advised
#: "add --rounds 10 to the command that measured it" of cells no command measured.
RERUN_HINT = "rerun it with more rounds (--rounds 10 on the command line, rounds=10 in workbench.benchmark)"
#: Where the rows show a busy machine (other processes past BUSY_CPU_SHARE of the CPU): no more rounds, which add
#: the disturbance too (docs/statistics.md: `--rounds 9` widened floors at load 10-11, ±25-28% against ±11-12%).
BUSY_RERUN_HINT = "rerun it while the machine is otherwise idle (more rounds on a busy machine add its disturbance too)"
#: The hint where the rows show an idle machine; it names no cause (nor "otherwise idle" at 1% other load).
IDLE_RERUN_HINT = f"the machine was not busy (other processes took little of the CPU); {RERUN_HINT}"
#: How a cause text (:func:`workbench.report.claims_cause.disturbance_text`) says an idle machine; where it is said
#: there, the hint does not say it again (:func:`hint_after`).
NOT_BUSY = "not busy"


#: A cell's "disturbed" in words, one phrase everywhere (:func:`spread_disturbed`: IQR >= half the median). The "±"
#: beside a time prints the whole IQR (q3 - q1), so the rule is said in that figure: "quartiles span ±50% of its
#: median" read as an IQR of a whole median (01, 03, 08 readers). A *disturbed comparison* is another thing: its
#: interval reaches ±50% (:func:`is_disturbed`), whether or not either cell is disturbed (docs/statistics.md).
CELL_RULE = "its quartiles lie half its median or more apart (its IQR, q3 - q1, at 50% of the median or more)"


#: How far apart (slowest round median over fastest) a cell's rounds may lie and still agree: the noisy mark's 10%
#: (:data:`~workbench.judge.verdicts.NOISY_SPREAD`, which re-exports this module and so cannot be imported here).
ROUNDS_AGREE = 1.10


def cell_hint(busy: bool | None, rounds_spread: float) -> str:
    """The advice for a disturbed cell, following its cause: where its rounds agree (within :data:`ROUNDS_AGREE`) on a
    machine that was not busy, its spread lies within its calls, which more rounds do not narrow (01 and 03 advised
    "rerun it with more rounds" beside rounds 1.06x apart on an idle machine); else :func:`rerun_hint`."""
    if busy is False and math.isfinite(rounds_spread) and rounds_spread <= ROUNDS_AGREE:
        return (f"its rounds agreed (within {rounds_spread:.2f}×) on a machine that was {NOT_BUSY}, so the spread is "
                "its calls' own: more rounds will not narrow it, and its quartiles are the reading")
    return rerun_hint(busy)


def rerun_hint(busy: bool | None) -> str:
    """The rerun advice for a comparison whose rows showed a busy machine (True), an idle one (False), or did not
    say (None): a busy-machine cause only where the rows record one."""
    return BUSY_RERUN_HINT if busy else IDLE_RERUN_HINT if busy is not None else RERUN_HINT


def hint_after(cause: str, hint: str) -> str:
    """``hint`` said after ``cause``: without :data:`IDLE_RERUN_HINT`'s "the machine was not busy (...)" where
    ``cause`` already says :data:`NOT_BUSY` (05 printed "on a machine that was not busy (load up to 0.8, ...)): the
    machine was not busy (other processes took little of the CPU)", one fact twice in one sentence)."""
    return RERUN_HINT + hint[len(IDLE_RERUN_HINT):] if NOT_BUSY in cause and hint.startswith(IDLE_RERUN_HINT) \
        else hint


def rounds_could(busy: bool | None, goal: str) -> str:
    """Advice that more evidence *could* ``goal`` ("show where most of them fall"), following the rows' busy flag as
    :func:`rerun_hint` does: on a busy machine a rerun while it is otherwise idle, never more rounds there (10 advised
    "more rounds would show where most of them fall" on a run it said shared the machine, beside lines warning that
    more rounds on a busy machine add its disturbance); "could", since nothing printed shows what the rerun's noise
    will be."""
    if busy:
        return f"a rerun while the machine is otherwise idle could {goal} (more rounds on a busy machine add its " \
               "disturbance too)"
    return f"more rounds could {goal}"


def pct(x: float) -> str:
    """A relative difference as a percentage with sensible digits: 4.2%, 38%, 1,155%."""
    v = 100 * x
    return f"{v:.1f}%" if v < 10 else f"{v:,.0f}%"


def is_disturbed(floor: Any) -> bool:
    """Whether an interval of half-width ``floor`` (relative) is too wide to inform: at or past
    :data:`DISTURBED_FLOOR` as printed (inclusive: 04 printed "4×-9×", exactly ±50%, as a finding; 07 printed
    "within ±50% noise" for a floor of 49.7%, which :func:`pct` rounds to the edge), or unknown though a verdict
    was reached."""
    try:
        f = float(floor)
    except (TypeError, ValueError):
        return False
    if f != f:
        return False
    return not math.isfinite(f) or f >= DISTURBED_FLOOR or pct(f) == pct(DISTURBED_FLOOR)


def spread_disturbed(spread: float, median: float) -> bool:
    """Whether a cell's spread (its IQR, or q3 - q1) reaches :data:`DISTURBED_FLOOR` of its median (inclusive, as
    :func:`is_disturbed`): its time then reads "disturbed" and no "±" is printed. The one edge every such test uses."""
    return spread >= DISTURBED_FLOOR * median


def cell_disturbed(median: Any, iqr: Any = None, q1: Any = None, q3: Any = None) -> bool:
    """Whether one cell reads "disturbed": the wider of its spreads (its IQR ``iqr``, its quartiles ``q3 - q1``)
    reaches :data:`DISTURBED_FLOOR` of its ``median`` (:func:`spread_disturbed`). The one rule the figure's crosses,
    the tables' "disturbed" and the sentences' "rests on a disturbed cell" all follow (:func:`cells_disturbed`
    vectorised): 01 drew numba's cell as a cross "no value to read" by its quartiles while its sentence settled
    "numpy was faster" on it. Unknown spreads or median: not disturbed."""
    m = _float(median)
    spreads = [x for x in (_float(iqr), _float(q3) - _float(q1)) if math.isfinite(x)]
    return bool(spreads) and math.isfinite(m) and m > 0 and spread_disturbed(max(spreads), m)


def cells_disturbed(median: Any, iqr: Any = None, q1: Any = None, q3: Any = None) -> np.ndarray:
    """:func:`cell_disturbed` of arrays of cells, element by element (a figure's points, a table's rows)."""
    m = np.asarray(median, dtype=float)
    nan = np.full(m.shape, np.nan)
    i = nan if iqr is None else np.asarray(iqr, dtype=float)
    q = nan if q1 is None or q3 is None else np.asarray(q3, dtype=float) - np.asarray(q1, dtype=float)
    with np.errstate(invalid="ignore"):
        spread = np.fmax(i, q)   # the wider where both are known, the known one otherwise
        return np.asarray(np.isfinite(m) & (m > 0) & np.isfinite(spread) & spread_disturbed(spread, m), dtype=bool)


def _float(x: Any) -> float:
    try:
        return float(x) if x is not None else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def span_disturbed(lo: float, hi: float) -> bool:
    """Whether two estimates ``lo`` <= ``hi`` (ratios) lie :data:`DISTURBED_FLOOR` or more apart end to end
    (``hi / lo >= 1 + DISTURBED_FLOOR``, inclusive): their range is no finding, only the direction is."""
    return hi >= (1 + DISTURBED_FLOOR) * lo

"""Ratios in words and table cells, as precise as their intervals allow (:mod:`workbench.report.claims` and
the tutorials print every speed-up through these, so a sentence and the table beside it agree digit for digit).

One rule (:class:`RatioPrecision`) sets the decimals of every estimate, interval end and one-sided bound: they
follow the interval's half-width in ratio units, ``clamp(-floor(log10(half_width)), 0, 3)`` ("1.06× (1.02-1.10)",
"2.9× (2.5-3.4)", "6× (4-8)", "1.2× within ±16%"), both ends of an interval with the same decimals. Readers of
issue 39 met the opposite: three significant figures on inconclusive estimates ("1.15× faster, within ±16%"), two on
settled ones, bounds with three ("2.49×-3.43×" around "2.9×") and mixed decimals in one interval ("1.02×-1.1×")."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.judge.verdicts import DISTURBED_FLOOR, SAME_WITHIN
from workbench.report.printed_intervals import printed_half_width

#: The most decimals the rule gives (a ratio known to better than ±0.0005 is still printed to three).
MAX_DECIMALS = 3
#: The most decimals any printed ratio gets, where a mark must be told apart or a small ratio needs two digits.
MAX_EXTRA_DECIMALS = 5


def _finite(*xs: float) -> bool:
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


@dataclass(frozen=True)
class RatioPrecision:
    """How many decimals an interval ``lo``-``hi`` (ratios) and every figure said with it are printed with."""

    decimals: int

    @classmethod
    def of(cls, lo: float, hi: float, marks: Sequence[float] = ()) -> RatioPrecision:
        """The decimals the interval's half-width supports (:data:`MAX_DECIMALS` at most; 2 without a finite
        interval). Then more, where needed: so that an interval that excludes no change (1) prints on its side of 1
        ("1.0×-1.3×" for 1.03-1.26 read as including no change), an end on the far side of a ``mark`` (a band
        edge) prints past it ("0.952×-1.05×" sat exactly on the ±5% band it was said to reach past), and an interval
        below 1 keeps two significant digits at its low end ("0.04×-0.07×" for 0.0412-0.0675)."""
        if not (_finite(lo, hi) and 0 < lo <= hi):
            return cls(2)
        half = (hi - lo) / 2
        decimals = MAX_DECIMALS if half <= 0 else min(max(-math.floor(math.log10(half)), 0), MAX_DECIMALS)
        # two significant digits of the low end, whichever side of 1 it lies: "9× (8×-11×)" read as a
        # claim coarser than the table's 9.4× (04), "4× (3×-6×)" beside 0.24 (0.17-0.33) as 4.2 (3.0-5.9) (01)
        decimals = max(decimals, 1 - math.floor(math.log10(lo)))
        checks = [(e, m, up) for m in marks for e, up in ((lo, False), (hi, True)) if e != m]
        if lo > 1 or hi < 1:
            checks += [(lo, 1.0, False), (hi, 1.0, True)]
        while decimals < MAX_EXTRA_DECIMALS and not all(_apart(e, m, decimals, up) for e, m, up in checks):
            decimals += 1
        # an interval under the ±50% that can inform prints under it too: 4.4-8.6 at no decimals read "4×-9×",
        # exactly ±50% around 6× (04), beside no "disturbed"
        while (decimals < MAX_EXTRA_DECIMALS and printed_half_width(lo, hi) < DISTURBED_FLOOR
               <= printed_half_width(outward(lo, decimals, False), outward(hi, decimals, True))):
            decimals += 1
        return cls(min(decimals, MAX_EXTRA_DECIMALS))

    def fmt(self, x: float) -> str:
        """``x`` at these decimals, with "×" (trailing zeros kept: "1.10×" beside "1.02×")."""
        return f"{x:.{self.decimals}f}×" if _finite(x) else f"{x}×"

    def interval(self, lo: float, hi: float) -> str:
        """Both ends at these decimals, rounded outward (the low end down, the high end up): an interval is never
        printed narrower than the data (01 printed "0.8×-1.1×" for 0.83-1.14, whose inverse reaches 1.2×, not 1.1×)."""
        if not _finite(lo, hi):
            return f"{self.fmt(lo)}-{self.fmt(hi)}"
        d = self.decimals
        return f"{outward(lo, d, False):.{d}f}×-{outward(hi, d, True):.{d}f}×"


def outward(x: float, decimals: int, up: bool) -> float:
    """``x`` at ``decimals``, rounded away from the interval's middle: up for a high end, down for a low one (a
    hair's tolerance, so that 1.1 stored as 1.1000000000000001 does not print as 1.2)."""
    scaled = x * 10 ** decimals
    return (math.ceil(scaled - 1e-9) if up else math.floor(scaled + 1e-9)) / 10 ** decimals


def interval_name(v: Any = None) -> str:
    """"97.5% interval": the word a sentence prints before an interval's ends, with its coverage (``v``'s
    ``coverage``, else the verdicts' :data:`~workbench.judge.verdicts.CONFIDENCE`), as docs/statistics.md says each
    interval is labelled (04, 05 and 06 printed "(interval 2.1×-2.3×)", its coverage left to the reader to guess)."""
    from workbench.judge.verdicts import CONFIDENCE

    c = v.get("coverage") if hasattr(v, "get") else v
    try:
        c = float(c)
    except (TypeError, ValueError):
        c = CONFIDENCE
    return f"{100 * (c if math.isfinite(c) and 0 < c < 1 else CONFIDENCE):g}% interval"


def _apart(e: float, mark: float, decimals: int, up: bool | None = None) -> bool:
    """Whether ``e``, printed at ``decimals`` (rounded outward where ``up`` says which end it is), is printed on its
    own side of ``mark`` printed alike."""
    a = round(e, decimals) if up is None else outward(e, decimals, up)
    return a != round(mark, decimals) or e == mark


def _inverse(lo: float, hi: float) -> tuple[float, float]:
    return (1 / hi if _finite(hi) and hi > 0 else float("nan")), (1 / lo if _finite(lo) and lo > 0 else float("nan"))


def _three_figures(x: float) -> int:
    """The decimals that print ``x`` (> 0) to three significant figures ("1.18×", "12.3×", "0.0523×")."""
    return max(2 - math.floor(math.log10(x)), 0)


def estimate_text(x: float, lo: float, hi: float) -> str:
    """A ratio at the precision of its interval ``lo``-``hi`` (:class:`RatioPrecision`): "1.06×" in 1.02-1.10,
    "2.9×" in 2.5-3.4, "6×" in 4-8, "1.2×" within ±16%; two decimals without a finite interval."""
    full = RatioPrecision.of(lo, hi)
    if not (_finite(x, lo, hi) and 0 < x and 0 < lo <= hi):
        return full.fmt(x)
    # three significant figures at most: the decimals an interval end needed to print apart from 1 are the end's,
    # not the estimate's (10 printed "1.176× faster (interval 1.003-1.38×)"); more only where the estimate itself
    # would print as no change
    d = min(full.decimals, _three_figures(x))
    while d < full.decimals and x != 1 and round(x, d) == 1:
        d += 1
    return RatioPrecision(d).fmt(x)


def interval_text(lo: Any, hi: Any, marks: Sequence[float] = ()) -> str:
    """An interval cell at its own precision, both ends alike ("1.02×-1.10×", "2.5×-3.4×"), or a one-sided bound
    said as one ("≥ 1.03×", "≤ 0.95×") where only one end is known (a bare "0.95×" in an interval column read as
    a two-sided figure); "" where neither is. ``marks``: band edges an end must print past where it lies past
    them (:meth:`RatioPrecision.of`); no change (1) is always one, so an end near 1 prints on its own side of it."""
    known = [None if x is None or pd.isna(x) else float(x) for x in (lo, hi)]
    if known[0] is not None and known[1] is not None:
        # no change (1) is always a mark: an end that prints as "1.0×" hides whether the interval holds it (01 printed
        # "1.0×-1.7×" for an interval whose low end lay just under 1)
        return RatioPrecision.of(known[0], known[1], (*marks, 1.0)).interval(known[0], known[1])
    # a one-sided bound rounded as its sentence rounds it (:func:`bound_text`: 07 printed "≥ 1.27×" in the table
    # beside "at least 1.2× faster")
    if known[0] is not None:
        return f"≥ {_bound_cell(known[0], up=False)}"
    return f"≤ {_bound_cell(known[1], up=True)}" if known[1] is not None else ""


def _bound_cell(x: float, up: bool) -> str:
    """A one-sided bound as a table cell. From 1 up, as its sentence rounds it (:func:`bound_text`); below 1, which
    the sentence says inverted ("took at least 5.4× its time"), with the fewest digits whose inverse the sentence
    rounds alike: 01 printed "≤ 0.19×" (1/0.19 = 5.26) beside "at least 5.4× its time" (1/0.185)."""
    if not (_finite(x) and 0 < x < 1):
        return bound_text(x, up=up)
    said = bound_text(1 / x, up=not up)
    rnd = math.ceil if up else math.floor
    start = max(1 - math.floor(math.log10(x)), 1)
    for decimals in range(start, start + 4):
        shown = rnd(x * 10 ** decimals + (-1e-9 if up else 1e-9)) / 10 ** decimals
        if 0 < shown < 1 and bound_text(1 / shown, up=not up) == said:
            return f"{shown:.{decimals}f}×"
    return bound_text(x, up=up)


def mark_text(x: float, mark: float, decimals: int = 2) -> str:
    """A ratio said beside a threshold ``mark`` it is tested against, with the decimals that print it on its own
    side of the mark: 05 printed a round "1.05×" slower as under a 5% threshold (1.049)."""
    if not _finite(x):
        return f"{x}×"
    while decimals < MAX_EXTRA_DECIMALS and not _apart(x, mark, decimals):
        decimals += 1
    return f"{x:.{decimals}f}×"


def bound_text(x: float, up: bool = False, precision: RatioPrecision | None = None) -> str:
    """A one-sided bound ("at least ..."), rounded down so that it stays a bound; ``up``: an upper bound ("rules out
    more than ..."), rounded up. At ``precision`` where the bound comes from an interval that sets one (a bound
    said beside its interval prints as that interval's ends do); else the interval is too wide to set one (a
    disturbed comparison) and the bound keeps two significant digits ("14×" for 14.89, "1.8×", "0.067×"), or
    three where two would print it as 1 ("1.04×": "at least 1.0× faster" reads as no change)."""
    if not (_finite(x) and x > 0):
        return f"{x}×"
    rnd = math.ceil if up else math.floor
    if precision is not None:
        decimals = precision.decimals
    else:
        decimals = 1 - math.floor(math.log10(x)) + (1 if 1 <= x < 1.15 else 0)   # "1.13×", not "1.2×", for 1.127
    shown = rnd(x * 10 ** decimals + (-1e-9 if up else 1e-9)) / 10 ** decimals
    while shown == 1 != x and decimals < MAX_DECIMALS:
        decimals += 1
        shown = rnd(x * 10 ** decimals + (-1e-9 if up else 1e-9)) / 10 ** decimals
    return f"{shown:.{max(decimals, 0)}f}×"


def interval_beside(figure: str, lo: float, hi: float) -> str:
    """:func:`interval_text` of ``lo``-``hi`` at no fewer decimals than ``figure`` (the estimate printed beside it):
    one precision in one sentence (01 printed "took 1.31× its time (interval 1.2×-1.5×)")."""
    if not (_finite(lo, hi) and 0 < lo <= hi):
        return interval_text(lo, hi)
    shown = figure.rstrip("×").replace(",", "")
    given = len(shown.partition(".")[2]) if shown.replace(".", "").isdigit() else 0
    own = RatioPrecision.of(lo, hi, (1.0,))
    return RatioPrecision(max(own.decimals, given)).interval(lo, hi)


def flipped(lo: float, hi: float) -> tuple[float, float]:
    """An interval of A's time over B's (``lo``-``hi``) as B's time over A's, as wide as the inverse of its true ends
    and of its ends as :func:`interval_text` prints them, whichever is wider: a sentence saying it inverted must not
    be narrower than what a reader inverts from the table beside it (01 printed "took 5.2× its time (interval
    4.6×-5.8×)" beside a table's 0.17×-0.22×, which inverts to 4.5-5.9)."""
    if not (_finite(lo, hi) and 0 < lo <= hi):
        return _inverse(lo, hi)
    ends = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", interval_text(lo, hi).replace(",", ""))]
    p_lo, p_hi = (ends[0], ends[1]) if len(ends) == 2 and ends[0] > 0 else (lo, hi)
    return min(1 / hi, 1 / p_hi), max(1 / lo, 1 / p_lo)


def inverted_bounds(lo: float, hi: float) -> tuple[str, str]:
    """An interval of A's time over B's (``lo``-``hi``), printed by :func:`interval_text`, as bounds on B's time over
    A's: (at least, at most), one precision (:class:`RatioPrecision` of the inverse), each rounded outward from the
    worse of the true end and the inverse of the end as printed. 07 printed "0.9×" in its table and "rules out run B
    taking more than 1.1× run A's time" beside it (1/0.93 rounded up), while the reader's 1/0.9 is 1.11: a bound said
    beside a printed interval must follow from the printed ends too, not only from the unrounded ones."""
    shown = interval_text(lo, hi)
    ends = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", shown.replace(",", ""))]
    p_lo, p_hi = (ends[0], ends[1]) if len(ends) == 2 and ends[0] > 0 else (lo, hi)
    at = RatioPrecision.of(1 / hi, 1 / lo)
    least, most = min(1 / hi, 1 / p_hi), max(1 / lo, 1 / p_lo)
    return bound_text(least, precision=at), bound_text(most, up=True, precision=at)


#: The most an inverted figure's rounding may move its effect (``N - 1`` of "took N× the time"), relative.
EFFECT_ROUNDING = 0.25


def inverse_text(x: float, lo: float, hi: float, marks: Sequence[float] = ()) -> str:
    """A speed-up ``x`` below 1 said inverted ("took 1.05× its time"), at the precision of the inverted interval
    (:class:`RatioPrecision`; ``marks`` as A's time over B's), with more decimals where that rounding would move
    the effect by more than :data:`EFFECT_ROUNDING` of it: 07 printed "1.1× slower" beside a table's 0.95×
    (1.053), doubling the 5% it measured; a figure that prints as 1 stays so (the sentence says "no difference")."""
    if not (_finite(x) and x > 0):
        return f"{x}×"
    inv_lo, inv_hi = _inverse(lo, hi)
    t, d = 1 / x, RatioPrecision.of(inv_lo, inv_hi, [1 / m for m in marks if m]).decimals
    d = min(d, _three_figures(t))   # as estimate_text: an end's extra decimals are not the estimate's
    while d < MAX_EXTRA_DECIMALS and round(t, d) != 1 and abs(round(t, d) - t) > EFFECT_ROUNDING * abs(t - 1):
        d += 1
    return RatioPrecision(d).fmt(t)


def table_ratio(x: float, lo: float, hi: float) -> str:
    """A speed-up as a table beside its sentence prints it. From 1 up, as the sentence ("1.14×"). Below 1, which
    the sentence says inverted ("took 5× its time"), with the fewest digits (two significant at least) whose
    inverse prints as the sentence's figure: a table's "0.18×" (5.6×) beside "took 5× its time" read as a
    contradiction; "0.182×" inverts to 5.49, which the sentence prints as 5. Never more digits than three significant
    ones: where none of those inverts to the sentence's figure, "1/1.13×" (that figure, as a fraction)."""
    if not (_finite(x) and x > 0):
        return ""
    if x >= 1:
        return estimate_text(x, lo, hi)
    said = inverse_text(x, lo, hi)
    if float(said.rstrip("×")) == 1:
        # no change at the sentence's precision reads the same either way up: the table prints the sentence's
        # figure as it is (07 printed "0.999×" and "1/1.00×" beside sentences reading "1.00× measured")
        return estimate_text(x, lo, hi)
    start = max(1 - math.floor(math.log10(x)), 1)
    for decimals in range(start, start + 2):   # three significant digits at most, as the sentence's figure
        shown = round(x, decimals)
        if 0 < shown < 1 and inverse_text(shown, lo, hi) == said:
            return f"{shown:.{decimals}f}×"
    # no ratio at that precision inverts to the sentence's figure: the table prints that figure, inverted as a
    # fraction (05 printed "0.8814×" at four digits beside "took 1.13× its time")
    return f"1/{said}"


def sigma_pct(sigma: float) -> str:
    """A log-scale sigma as the percentage it scatters a ratio by, ``e^σ - 1`` ("±16%" for σ = 0.15), the one
    conversion every sentence uses (07 printed σ = 0.15 as "about ±16%" in one cell and a scatter of 0.21 as
    "±21%", i.e. 100·σ, in another)."""
    if not _finite(sigma):
        return "±?"
    v = 100 * math.expm1(abs(sigma))
    return f"±{v:.1f}%" if v < 10 else f"±{v:,.0f}%"


def same_band() -> tuple[float, float]:
    """The ±5% band "same" holds a whole interval to, as ratio marks for :func:`interval_text`: an end near an edge
    prints on its side of it (07 printed "the whole 99% interval (0.95×-1.02×)" inside a band whose low edge is
    1/1.05 = 0.952×)."""
    return 1 / (1 + SAME_WITHIN), 1 + SAME_WITHIN

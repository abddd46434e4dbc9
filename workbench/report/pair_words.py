"""Words for one pair's figures, each in the direction of the word it accompanies (split from
:mod:`workbench.report.claims`, which re-exports them): an unsettled pair's estimate and interval, a speed-up said
with its direction, and the two medians a "from the medians" figure divides.

08 printed "numpy-naive measured 1.03× slower: its interval (0.94×-0.99×)": a slowdown beside a speed-up's interval.
10 printed "1.09× faster from the medians" beside a table whose medians gave 1.04×: the figure divided the medians of
the paired rounds, which the sentence did not say. Here a slower estimate's interval is the time it took, like the
estimate, and a ratio "from the medians" names the two medians it divides (and the table's, where they differ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.core.units import fmt_seconds
from workbench.judge.verdicts import MIN_EFFECT, SAME_WITHIN, pct
from workbench.report.claims_rows import _num
from workbench.report.ratio_text import RatioPrecision, flipped, inverse_text

#: The decimals an unsettled estimate that prints as 1 is given before it is said as "no difference" (three
#: figures: 1.04 is a difference a table of three-figure medians shows).
NO_DIFFERENCE_DECIMALS = 2
#: The edges of the band "same" is said within, as ratios (:func:`workbench.judge.verdicts.decide`, on a log scale).
BAND_EDGES = (1 / (1 + SAME_WITHIN), 1 + SAME_WITHIN)


def fmt_floor(floor: float) -> str:
    """A noise floor as "±12%" (thousands grouped: a floor of ±80,341,800% has been seen under load); one at
    :data:`~workbench.judge.verdicts.MIN_EFFECT`, the least a floor is ever set to, as "±5.0% (the minimum)": 07
    printed a column of "±5.0%" beside intervals of ±3.5%, as if measured (judge/verdicts.decide clamps it)."""
    if not math.isfinite(floor):
        return "±?"
    return f"±{pct(floor)}" + (" (the minimum)" if abs(floor - MIN_EFFECT) <= 1e-9 else "")


def medians_source(v: Mapping[str, Any]) -> str:
    """The two medians a pair's "from the medians" ratio divides (``median_a`` / ``median_b``, the base's first):
    "2.9 ms / 2.65 ms"; where the pair carries the medians its table prints (``table_median_a``/``_b``, from
    :func:`workbench.report.claims.mark_busy`) and they print otherwise, both, each named: "2.9 ms / 2.65 ms, the
    medians of the paired rounds; the table's medians, over all samples, 2.75 ms / 2.65 ms, give 1.04×". "" where
    the medians are not known."""
    a, b = _num(v, "median_a"), _num(v, "median_b")
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        return ""
    said = f"{fmt_seconds(a)} / {fmt_seconds(b)}"
    ta, tb = _num(v, "table_median_a"), _num(v, "table_median_b")
    if not (math.isfinite(ta) and math.isfinite(tb) and ta > 0 and tb > 0) or (
            fmt_seconds(ta), fmt_seconds(tb)) == (fmt_seconds(a), fmt_seconds(b)):
        return said
    return (f"{said}, the medians of the paired rounds; the table's medians, over all samples, "
            f"{fmt_seconds(ta)} / {fmt_seconds(tb)}, give {ta / tb:.2f}×")


def as_speed(other: str, x: float) -> str:
    """A speed-up (time base / time other) with its direction in words, two decimals: "numba 1.07× faster",
    "numba took 1.03× the time"."""
    if f"{x:.2f}" == "1.00" and f"{1 / x:.2f}" == "1.00":
        return f"{other} at the same speed (1.00×)"
    return f"{other} {x:.2f}× faster" if x >= 1 else f"{other} took {1 / x:.2f}× the time"


def flip(lo: float, hi: float) -> tuple[float, float]:
    """An interval of speed-ups as the time it took, never narrower than the inverse of the ends its table prints
    (:func:`~workbench.report.ratio_text.flipped`)."""
    return flipped(lo, hi)


def apart_text(s: float, lo: float, hi: float, name: str = "interval") -> str:
    """A "same" pair measurably apart (its interval ``lo``-``hi`` excludes 1), in its own direction, estimate and
    interval alike: "about 2.0% slower (took 1.020× the time, interval 1.012×-1.029×)" ("0.98× measured, interval
    0.972×-0.988×" beside "slower" read as a speed-up), "about 3.0% faster (1.030× measured, interval ...)"."""
    if s > 1:
        at = RatioPrecision.of(lo, hi, BAND_EDGES)
        return f"about {pct(s - 1)} faster ({at.fmt(s)} measured, {name} {at.interval(lo, hi)})"
    at = RatioPrecision.of(*flip(lo, hi), BAND_EDGES)
    return f"about {pct(1 / s - 1)} slower (took {at.fmt(1 / s)} the time, {name} {at.interval(*flip(lo, hi))})"


def unsettled_why(other: str, s: float, lo: float, hi: float, floor: float, name: str = "interval") -> str:
    """Why an inconclusive pair settles nothing, with the estimate in words ("0.12× measured" leaves the reader to
    work out which took longer): an interval that holds no change, or the noise it lies within. ``name``: the
    interval's word with its coverage (:func:`~workbench.report.ratio_text.interval_name`)."""
    wide = math.isfinite(floor) and abs(math.log(s)) > math.log1p(floor)
    at_band = not wide and floor <= MIN_EFFECT + 1e-9 and 0 < lo <= hi
    # the estimate and the interval printed with it at one precision, fine enough that an interval said to hold
    # no change prints on both sides of 1 (11 printed "1.00×-1.07× includes no change" for 0.997-1.068) and one
    # said to reach past the band prints past its edges
    marks = (1.0, *BAND_EDGES) if at_band else (1.0,) if wide else ()
    # the interval in the estimate's own direction: a "slower" estimate is said as the time it took, so its interval
    # is too (08 printed "1.03× slower: its interval (0.94×-0.99×)", a speed-up's interval beside a slowdown);
    # the band's edges are their own inverses, so the band prints alike either way
    shown = RatioPrecision.of(lo, hi, marks).fmt(s) if s >= 1 else inverse_text(s, lo, hi, marks)   # inverted
    # an estimate that prints as 1 at its interval's precision gets two decimals (three figures, as the table's
    # medians), which show a few percent: 05 printed "measured no difference at this precision (1.0×)" of 1.04,
    # beside rounds all one way (1.03-1.20×); "no difference" is left for what prints as 1.00
    digits = len(shown[:-1].split(".")[1]) if "." in shown else 0
    while float(shown[:-1]) == 1 and s != 1 and digits < NO_DIFFERENCE_DECIMALS:
        digits += 1
        shown = RatioPrecision(digits).fmt(s if s >= 1 else 1 / s)
    same = float(shown[:-1]) == 1   # "no difference" keeps the speed-up's direction
    slower = s < 1 and not same
    ends = flip(lo, hi) if slower else (lo, hi)
    at = RatioPrecision.of(*ends, marks)
    way = " slower" if slower else ""   # the interval read as the estimate is: "1.01×-1.06× slower"
    measured = (f"{other} measured no difference at this precision ({shown})" if same
                else f"{other} measured {shown} {'slower' if slower else 'faster'}")   # never "1.00× slower"
    if wide:
        return f"{measured}, but the {name} {at.interval(*ends)}{way} includes no change"
    if at_band:
        # the floor is the ±5% band itself, not a measured noise: "within ±5.0% noise" read as a measurement
        # beside an interval of ±3.5% (tutorial 11)
        # its ends printed finely enough to show where they pass the band's edges (08 printed "0.952×-1.05×",
        # exactly the band, as "reaches past" it)
        band, shown = f"±{pct(SAME_WITHIN)} ({at.interval(*BAND_EDGES)})", at.interval(*ends) + way
        if lo <= 1 <= hi:
            return (f"{measured}: its {name} ({shown}) includes no change but reaches past {band}, the band we "
                    "call the same")
        return (f"{measured}: its {name} ({shown}) lies on one side of no change, but the difference is smaller "
                f"than the {pct(MIN_EFFECT)} a change must reach, and the interval reaches past {band}, the band we "
                "call the same")
    # "noise floor", the verdict's edge (a multiple of its sigmas), never bare "noise": 07 printed "within ±15% noise"
    # and "±4.9% (one sigma)" in one sentence, one word for two figures
    return f"{measured}, within its {fmt_floor(floor)} noise floor"

"""Ratios in words and table cells, as precise as their intervals allow (:mod:`workbench.report.claims` and
the tutorials print every speed-up through these, so a sentence and the table beside it agree digit for digit)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def bound_text(x: float, up: bool = False) -> str:
    """A lower bound ("at least ...") with two significant digits, rounded down so that it stays a bound: "14×" for
    14.89 (01 printed "took at least 14.89× its time" of a comparison whose size is unknown), "1.8×" for 1.80;
    ``up``: an upper bound ("rules out more than ..."), rounded up ("1.13×" for 1.127: 07 printed 1.127×)."""
    if not (math.isfinite(x) and x > 0):
        return f"{x}×"
    rnd = math.ceil if up else math.floor
    decimals = 1 - math.floor(math.log10(x)) + (1 if 1 <= x < 1.15 else 0)   # near 1, as estimate_text
    shown = rnd(x * 10 ** decimals + (-1e-9 if up else 1e-9)) / 10 ** decimals
    while shown == 1 != x and decimals < 3:   # "at least 1.0× faster" would read as no change: "1.04×"
        decimals += 1
        shown = rnd(x * 10 ** decimals + (-1e-9 if up else 1e-9)) / 10 ** decimals
    return f"{shown:.{max(decimals, 0)}f}×"


def estimate_text(x: float, lo: float, hi: float) -> str:
    """A ratio as precise as its interval ``lo``-``hi`` supports: its last digit is the first significant digit of
    the interval's half-width ("50×" for 49.54 in 47.6-51.5, "1.12×" in 1.08-1.17, "3×" in 2.1-4.3), never fewer
    than two significant digits below 2 ("1.3×": "1× faster" reads as no change) and never more than two decimals
    ("310×" for 312 in 250-400).
    Without a finite interval: two decimals (01 printed "took 49.54× its time" beside an interval of ±4%).
    A figure near 1 (below 1.15) keeps two decimals (07 printed "(1.0×)" beside a table reading 0.95×; "1.1×" is
    anything from 5% to 15%)."""
    decimals = _estimate_decimals(x, lo, hi)
    return f"{x:.{decimals}f}×" if decimals >= 0 else f"{round(x, decimals):.0f}×"   # 312 in 250-400: "310×"


def _estimate_decimals(x: float, lo: float, hi: float) -> int:
    half = (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else float("nan")
    decimals = 2 if not (math.isfinite(half) and half > 0) else -math.floor(math.log10(half))
    if math.isfinite(x) and x > 0:
        # two significant digits below 2 ("1×" reads as no change); from 2 on, one is enough where the interval
        # is that wide (01 printed "took 3.0× its time" beside an interval of 2.1-4.3×)
        decimals = max(decimals, (1 if x < 2 else 0) - math.floor(math.log10(x)))
    decimals = min(decimals, 2)
    if decimals == 1 and x < 1.15:   # "1.0x"/"1.1x" for 0.95-1.15 hides the size a table beside it shows
        decimals = 2
    return decimals


def table_ratio(x: float, lo: float, hi: float) -> str:
    """A speed-up as a table beside its sentence prints it: at the precision :func:`estimate_text` gives the
    sentence (01 printed "1.1× faster" beside a table reading 1.13×). A ratio below 1, which the sentence says
    inverted ("took 5.5× its time"), keeps as many significant digits as that inverted figure ("0.18×")."""
    if not (math.isfinite(x) and x > 0):
        return ""
    if x >= 1:
        return estimate_text(x, lo, hi)
    inv = 1 / x
    inv_lo, inv_hi = (1 / hi if hi > 0 else float("nan")), (1 / lo if lo > 0 else float("nan"))
    digits = max(_estimate_decimals(inv, inv_lo, inv_hi) + math.floor(math.log10(inv)) + 1, 2)
    return f"{x:.{max(digits - 1 - math.floor(math.log10(x)), 0)}f}×"


def interval_text(lo: Any, hi: Any) -> str:
    """An interval cell: "1.03×-1.26×", or a one-sided bound said as one ("≥ 1.03×", "≤ 0.95×") where only one end
    is known (a bare "0.95×" in an interval column read as a two-sided figure); "" where neither is."""
    known = [None if x is None or pd.isna(x) else float(x) for x in (lo, hi)]
    if known[0] is not None and known[1] is not None:
        # an end of 10 or more in whole numbers (06 printed "75.3×-103×" and "17.7×-24.7×": a tenth that no
        # interval that wide supports), rounded to the nearest, as the table beside it rounds (outward, 10.1
        # printed "11×" beside a table's 0.0993×)
        ends = [f"{x:.0f}×" if x >= 10 else _ratio(x) for x in known]
        return "-".join(ends)
    # a one-sided bound rounded as its sentence rounds it (:func:`bound_text`: 07 printed "≥ 1.27×" in the table
    # beside "at least 1.2× faster")
    if known[0] is not None:
        return f"≥ {bound_text(known[0])}"
    return f"≤ {bound_text(known[1], up=True)}" if known[1] is not None else ""


def _ratio(x: float) -> str:
    """A ratio with three significant digits; one that rounds to 1 keeps three decimals ("1.002×", never a bare
    "1×" for a bound of 1.0015, which reads as "no change")."""
    text = f"{x:.3g}"
    return f"{f'{x:.3f}' if text == '1' else text}×"

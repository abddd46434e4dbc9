"""How close a library call reads to the ceiling it was set against, in words that follow from its share.

04 said "numpy's own GEMM reads near it" (its GEMM ceiling is numpy's BLAS at the probe's size and moment) in
prose, beside a figure that showed numpy at 0.25% of that ceiling: "near" is said here only of a share the rows
measured at or above :data:`NEAR_SHARE`, and always with the share itself. The share is the printed median's: 04
printed "100.0% of 115 GFLOP/s ... near it" beside a median of 299 µs for 33.55 MFLOP (112 GFLOP/s, 97.6%), the row's
stored percentage resting on another time; so the work and the median it divides are printed with it. A cell whose
quartiles lie half its median or more apart (the tables' "disturbed", a cross in the figures) gets no share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.core.units import fmt_bytes, fmt_seconds
from workbench.report.claims_rows import _num, quartiles_wide

#: The least share of a ceiling called "near" it (at most 100%: past it is "above it").
NEAR_SHARE = 0.8


def share_word(share: float) -> str:
    """"above it" past 100%, "near it" from :data:`NEAR_SHARE`, "below it" under that; "not measured" for none."""
    if not math.isfinite(share):
        return "not measured"
    return "above it" if share > 1 else "near it" if share >= NEAR_SHARE else "below it"


def _pct(share: float) -> str:
    # three figures, one decimal near 100% (99.96% is under the ceiling and must not print as 100%)
    x = 100 * share
    return f"{x:.1f}%" if 99.5 <= x < 100.5 else f"{x:.3g}%"


def library_ceiling_text(rows: pd.DataFrame, share_col: str = "pct_peak_flops",
                         ceiling_col: str = "ceiling_gflops", unit: str = "GFLOP/s") -> list[str]:
    """One line per library call (``library`` rows) and backend: the share of its row's ceiling it read at each
    size, each with :func:`share_word`, and where "near" starts; [] where no library row has a share."""
    lib = rows[rows["library"].astype(bool)] if "library" in rows else rows.iloc[0:0]
    lines = []
    for (variant, backend), g in lib.groupby(["variant", "backend"], sort=True):
        at = [_share_at(r, share_col, ceiling_col, unit) for r in g.to_dict("records")]
        if not any(share for _, share in at):
            continue
        lines.append(f"{variant} @ {backend} against its {unit} ceiling: {'; '.join(x for x, _ in at if x)} (near "
                     f"means {NEAR_SHARE:.0%} of it or more)")
    return lines


def _share_at(r: Mapping[str, Any], share_col: str, ceiling_col: str, unit: str) -> tuple[str, bool]:
    """(one size's share of its ceiling in words, whether a share was read): from the work over the printed median
    where the row has both (else its stored percentage), with what it divides; a disturbed cell's "no share is
    read"; ("", False) where nothing is known."""
    size, ceiling = r.get("size_label"), _num(r, ceiling_col)
    if quartiles_wide(r):
        return f"disturbed at {size} (its quartiles lie half its median or more apart): no share is read", False
    work, median = _num(r, "flops" if unit == "GFLOP/s" else "bytes"), _num(r, "median_s")
    if all(math.isfinite(x) and x > 0 for x in (work, median, ceiling)):
        share = work / median / 1e9 / ceiling
        amount = f"{work / 1e6:.4g} MFLOP" if unit == "GFLOP/s" else fmt_bytes(work)
        return (f"{_pct(share)} of {ceiling:.3g} {unit} at {size} ({amount} in {fmt_seconds(median)}, the median): "
                f"{share_word(share)}"), True
    share = _num(r, share_col) / 100
    if not (math.isfinite(share) and math.isfinite(ceiling)):
        return "", False
    return f"{_pct(share)} of {ceiling:.3g} {unit} at {size}: {share_word(share)}", True


def on_roof(pct: float) -> bool:
    """Whether a percentage of a roof (at most 100) prints as on it: one decimal near 100 gives "100.0%"."""
    return math.isfinite(pct) and f"{pct:.1f}" == "100.0"


def under_roofs_text(pcts: pd.Series | list[float], m: int) -> str:
    """"Every one of the 6 plotted points sits under its roof", or, where some print at 100.0% of it, "... sits at
    or under its roof (1 of them on it, at 100.0%)": 04 said "under" beside a point on its roof. ``pcts``: each
    point's highest percentage of its roofs (none past 100)."""
    on = sum(on_roof(float(p)) for p in pcts)
    if not on:
        return f"Every one of the {m} plotted points sits under its roof"
    return (f"Every one of the {m} plotted points sits at or under its roof ({on} of them on it, at 100.0% as "
            "printed)")

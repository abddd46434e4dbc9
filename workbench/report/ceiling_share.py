"""How close a library call reads to the ceiling it was set against, in words that follow from its share.

04 said "numpy's own GEMM reads near it" (its GEMM ceiling is numpy's BLAS at the probe's size and moment) in
prose, beside a figure that showed numpy at 0.25% of that ceiling: "near" is said here only of a share the rows
measured at or above :data:`NEAR_SHARE`, and always with the share itself.
"""

from __future__ import annotations

import math

import pandas as pd

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
        shares = pd.to_numeric(g[share_col], errors="coerce") / 100
        if not shares.notna().any():
            continue
        at = "; ".join(f"{_pct(s)} of {float(c):.3g} {unit} at {size}: {share_word(s)}"
                       for s, c, size in zip(shares, g[ceiling_col], g["size_label"], strict=True)
                       if math.isfinite(s))
        lines.append(f"{variant} @ {backend} against its {unit} ceiling: {at} (near means {NEAR_SHARE:.0%} of it "
                     "or more)")
    return lines

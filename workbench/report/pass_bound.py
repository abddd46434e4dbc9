"""How much of a fused kernel's speed-up its saved passes can explain.

If the bytes alone set the time, a fused kernel that makes ``fused`` passes over the data where the unfused one
makes ``unfused`` runs at most ``unfused / fused`` times faster. A speed-up whose whole interval lies above that
is not explained by the bytes: 05 printed "numba-fused ran 1.36× faster (interval 1.29×-1.43×). The unfused variant
makes an extra pass (5 passes to 4)", and 5/4 = 1.25× cannot account for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.report.ratio_text import interval_text


def pass_ratio(fused: int, unfused: int) -> float:
    """The most a fused kernel can gain from its passes alone: ``unfused / fused``."""
    if fused <= 0 or unfused < fused:
        raise ValueError(f"fused={fused}, unfused={unfused}: valid passes are 0 < fused <= unfused")
    return unfused / fused


def pass_bound_text(v: Mapping[str, Any], fused: int, unfused: int) -> str:
    """The clause a "faster" fusion sentence carries: the share of its speed-up the passes can account for,
    computed from them, and, where the verdict's whole interval (``ci_low``) lies above it, that the rest is not
    explained by the bytes moved."""
    most = pass_ratio(fused, unfused)
    said = f"the pass count accounts for at most {most:.2f}× ({unfused} passes / {fused}) of the speed-up"
    low = float(v.get("ci_low", math.nan))
    if math.isfinite(low) and low > most:
        # its low end as the interval prints it (outward): 05 printed "1.36×-1.51×" and "1.37× at its low end"
        shown = interval_text(low, v.get("ci_high")).split("-")[0]
        return (f"{said}; its whole interval lies above that ({shown} at its low end), so the rest is not "
                "explained by the bytes moved")
    high = float(v.get("ci_high", math.nan))
    if math.isfinite(high) and high <= most:
        # a ceiling above the whole measurement says nothing of the pass's share (05: "at most 1.25×" beside
        # 1.13× (1.09×-1.17×)): the pass could explain all of it or none, and these rows do not tell which
        return (f"the extra pass could explain all of the speed-up or none of it: its whole interval lies within the "
                f"{most:.2f}× ({unfused} passes / {fused}) that the pass count allows, and these rows do not "
                "measure which")
    return said

"""A total built from parts' medians, with the band their quartiles give: a disturbed part widens it, never voids it.

10 printed "no decode-step total at L=4,096 ... informs nothing" because the attention, 1% of the step, read
disturbed, while numpy's noisy cells got a total: a part's spread moves the total by that part's share of it, so the
total is said with the band of the parts' quartiles summed, and refused only where that band itself is too wide to
inform (its ends :data:`~workbench.judge.verdicts.DISTURBED_FLOOR` or more apart, as a range of ratios is).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.judge.disturbed import span_disturbed
from workbench.report.claims_rows import _num


def total_band(parts: Iterable[Mapping[str, Any]], times: float = 1.0) -> tuple[float, float, float] | None:
    """(total, low, high): ``times`` the sum of the parts' ``median_s``, and of their ``q1_s`` and ``q3_s``; None
    where a part lacks one of them."""
    rows = list(parts)
    sums = [sum(_num(r, k) for r in rows) for k in ("median_s", "q1_s", "q3_s")]
    if not rows or not all(math.isfinite(x) and x > 0 for x in sums):
        return None
    return times * sums[0], times * sums[1], times * sums[2]


def band_readable(band: tuple[float, float, float] | None) -> bool:
    """Whether a total's band can inform: known, and its ends less than ±50% apart (:func:`span_disturbed`)."""
    return band is not None and not span_disturbed(band[1], band[2])

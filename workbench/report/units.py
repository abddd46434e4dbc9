"""One time unit per table or axis (ns, µs, ms, s), as torch.utils.benchmark's Compare does.

A column of times mixing "16.1 µs" and "1.71 ms" makes a reader compare digits and units at once;
one unit per table lets the digits alone carry the comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: (unit, seconds per unit), largest first.
TIME_UNITS: tuple[tuple[str, float], ...] = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def _finite_positive(values: Iterable[object]) -> list[float]:
    out = []
    for v in values:
        try:
            f = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if math.isfinite(f) and f > 0:
            out.append(f)
    return out


def time_unit_for(seconds: float) -> tuple[str, float]:
    """The largest unit in which ``seconds`` is at least 1 (ns for anything smaller)."""
    for unit, scale in TIME_UNITS:
        if seconds >= scale:
            return unit, scale
    return TIME_UNITS[-1]


def pick_time_unit(values: Iterable[object]) -> tuple[str, float]:
    """The unit for a whole table: chosen from its smallest time, so no entry drops below 1 in it."""
    v = _finite_positive(values)
    return time_unit_for(min(v)) if v else ("s", 1.0)


def fmt_in_unit(seconds: object, scale: float, digits: int = 3) -> str:
    """``seconds`` in the given unit with ``digits`` significant figures (never scientific notation)."""
    v = _finite_positive([seconds])
    if not v:
        return ""
    x = v[0] / scale
    decimals = max(0, digits - 1 - int(math.floor(math.log10(x)))) if x > 0 else 0
    return f"{x:,.{decimals}f}"


def fmt_time_auto(seconds: object) -> str:
    """One time with its own unit ("16.1 µs"): for axis ticks and single values."""
    v = _finite_positive([seconds])
    if not v:
        return ""
    unit, scale = time_unit_for(v[0])
    return f"{fmt_in_unit(v[0], scale)} {unit}"


def fmt_tick_time(seconds: object) -> str:
    """A tick label: the shortest exact text in the tick's own unit ("20 µs", "1.5 ms")."""
    v = _finite_positive([seconds])
    if not v:
        return ""
    unit, scale = time_unit_for(v[0] * (1 + 1e-9))
    return f"{v[0] / scale:.3g} {unit}"

"""Formatting of times, sizes and rates: one home for every number a report, table or CLI line prints.

One time unit per table or axis (ns, µs, ms, s), as torch.utils.benchmark's Compare does: a column of
times mixing "16.1 µs" and "1.71 ms" makes a reader compare digits and units at once; one unit per
table lets the digits alone carry the comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: (unit, seconds per unit), largest first.
TIME_UNITS: tuple[tuple[str, float], ...] = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def _finite_positive(values: Iterable[object]) -> list[float]:
    return [f for f in _finite(values) if f > 0]


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


def fmt_seconds(seconds: object, missing: str = "n/a", *, zeros: bool = False) -> str:
    """One time with an automatic unit and three significant digits ("4.56 µs"); ``missing`` for no time. With
    ``zeros`` the trailing zeros stay, so a line that states three figures prints them ("4.00 ms", not "4 ms")."""
    v = _finite([seconds])
    if not v:
        return missing
    s = v[0]
    for unit, scale in TIME_UNITS:
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:{'#' if zeros else ''}.3g}".rstrip(".") + f" {unit}"
    return missing  # unreachable: ns takes everything smaller


def fmt_bytes(nbytes: object, missing: str = "") -> str:
    """A size in binary units ("3.1 MiB", "512 B"); ``missing`` for no size."""
    v = _finite([nbytes])
    if not v:
        return missing
    b = v[0]
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.3g} {unit}"
        b /= 1024
    return missing  # unreachable: TiB takes everything larger


def parse_bytes(text: str) -> float | None:
    """The inverse of :func:`fmt_bytes` ("3.1 MiB" -> 3250585.6); None when it is not such a text."""
    number, _, unit = text.strip().partition(" ")
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}.get(unit)
    try:
        return float(number) * scale if scale else None
    except ValueError:
        return None


def fmt_rate(value: object, unit: str, missing: str = "none") -> str:
    """A rate with its unit and three significant digits ("21.4 GB/s"); ``missing`` (never "None GB/s")
    for no value."""
    v = _finite([value])
    return f"{v[0]:.3g} {unit}" if v else missing


def _finite(values: Iterable[object]) -> list[float]:
    out = []
    for v in values:
        try:
            f = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def interval_label(coverage: Iterable[object] | None) -> str:
    """"99% interval" when every interval of a table has that coverage, else "interval"."""
    values = {round(100 * c, 1) for c in _finite(coverage if coverage is not None else [])}
    return f"{values.pop():g}% interval" if len(values) == 1 else "interval"

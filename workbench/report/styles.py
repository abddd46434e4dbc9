"""One colour and one marker per variant@backend, the same in every figure that shows it.

A series that changes colour between two figures makes a reader match legends instead of reading
lines, and two series of one figure in one colour (or in two pale shades of it) make it unreadable. The
colour is the series' place among all series, sorted (the same set always gives the same colours, no two
alike); with more series than :data:`PALETTE` has colours, each series in sorted order takes the first
colour no series drawn beside it (in a figure of the same kernel) has, so a figure never shows one colour
twice and its colours are the palette's first, strongest ones. The marker comes
from the backend's runtime, as the runtime declares it (:attr:`~workbench.backends.runtime.Runtime.marker`),
so a runtime keeps its shape in every figure. The dashboard can call
:func:`style_map` with its measured series and get the report's look.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.backends import registry

#: tab10, then ten darker hues that read on white and differ from them (the pale tab20 partners did not:
#: light grey and light pink lines vanished beside the strong ones).
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#b8860b", "#5e3c99", "#7b4173", "#252525", "#00796b", "#6b6ecf", "#e7298a", "#a55194")
#: Markers of backend families no runtime declares one for, drawn by the family's hash (none the built-in runtimes
#: declare: vulkan's pentagon, triton's hexagon).
OTHER_MARKERS: tuple[str, ...] = ("*", "<", ">", "8", "H", "d")
#: Markers that read as the cross every figure draws over a disturbed cell (:data:`~workbench.report.plots.frame.
#: DISTURBED_LABEL`, "no value to read"): no series gets one, declared or not. Vulkan's hollow filled "X" read as
#: that cross in tutorial 01's figure, beside a legend saying its crosses were disturbed cells.
CROSS_MARKERS: frozenset[str] = frozenset({"x", "X", "+", "P", "1", "2", "3", "4"})
#: Line styles that tell runs (or a second size parameter) apart while the colour stays the series'.
LINESTYLES: tuple[str, ...] = ("-", "--", ":", "-.")


@dataclass(frozen=True)
class SeriesStyle:
    color: str
    marker: str
    #: The series' name in legends where it is not its key (:func:`series_name`); None: the key.
    label: str | None = None


def series_key(variant: object, backend: object) -> str:
    """``"variant @ backend"``: the name a series has in every legend, table and style map."""
    return f"{variant} @ {backend}"


@functools.lru_cache(maxsize=256)
def backend_runtime(backend: object) -> str:
    """The runtime a backend name belongs to (``vulkan`` -> ``wgpu``; a name this install does not know: its
    family, the part before the first '-')."""
    return _runtime_of(str(backend))


@functools.lru_cache(maxsize=256)
def _runtime_of(name: str) -> str:
    """Once per name: a report asked for each of 100,000 rows, and a name that is a runtime's (``torch``)
    has the registry probe that runtime's devices."""
    return registry.runtime_of(name) or name.split("-")[0].lower()


def series_name(variant: object, backend: object, runtime: object = None) -> str:
    """A series' name for a reader: its key, or, where the code ran on another runtime than its backend's
    (a ``quick()`` callable compiled by numba and given numpy arrays), ``"variant (numba, numpy inputs)"``, so
    no legend says numba code ran on numpy."""
    rt = foreign_runtime(backend, runtime)
    return f"{variant} ({rt}, {backend} inputs)" if rt else series_key(variant, backend)


def foreign_runtime(backend: object, runtime: object) -> str:
    """``runtime`` where the code ran on another runtime than ``backend``'s (a ``quick()`` callable compiled
    by numba and given numpy arrays), else "" (none recorded, or the backend's own)."""
    rt = "" if runtime is None or (isinstance(runtime, float) and runtime != runtime) else str(runtime)
    return rt if rt and backend is not None and rt != backend_runtime(backend) else ""


def _marker(key: str) -> str:
    """The marker of the runtime whose name or backend family (the backend name up to its first '-') the
    series' backend has; one drawn from :data:`OTHER_MARKERS` where it declares none, or a cross
    (:data:`CROSS_MARKERS`, the disturbed cell's mark)."""
    backend = key.partition(" @ ")[2]
    family = backend.split("-")[0].lower()
    declared = registry.runtime(family)
    if declared is not None and declared.marker and declared.marker not in CROSS_MARKERS:
        return declared.marker
    return OTHER_MARKERS[zlib.crc32(family.encode()) % len(OTHER_MARKERS)]


def style_map(keys: Iterable[str], labels: Mapping[str, str] | None = None,
              together: Iterable[Iterable[str]] | None = None) -> dict[str, SeriesStyle]:
    """A style per series key, markers by runtime and ``labels`` (key -> legend name) where a series' name
    is not its key. Colours: by sorted position up to 20 series (no two alike); past that, each key in sorted
    order takes the first colour no key drawn beside it has, ``together`` listing the groups drawn together
    (one per kernel; without it every key is beside every other)."""
    uniq = sorted({str(k) for k in keys})
    labels = labels or {}
    groups = [set(map(str, g)) for g in together] if together is not None else [set(uniq)]
    beside: dict[str, set[str]] = {k: set() for k in uniq}
    for g in groups:
        for k in g & beside.keys():
            beside[k] |= g - {k}
    colour: dict[str, int] = {}
    for k in uniq:
        if len(uniq) <= len(PALETTE):
            colour[k] = len(colour)
            continue
        taken = {colour[o] for o in beside[k] if o in colour}
        colour[k] = next((i for i in range(len(PALETTE)) if i not in taken), len(colour) % len(PALETTE))
    return {k: SeriesStyle(PALETTE[colour[k]], _marker(k), labels.get(k)) for k in uniq}


def series_style(key: str, styles: Mapping[str, SeriesStyle] | None = None) -> SeriesStyle:
    """The style of one series: from ``styles`` when it has the key, else from a hash of the key
    (stable across processes, but two series may then share a colour: pass a :func:`style_map`)."""
    if styles and key in styles:
        return styles[key]
    return SeriesStyle(PALETTE[zlib.crc32(key.encode()) % len(PALETTE)], _marker(key))


def styles_for(df: pd.DataFrame) -> dict[str, SeriesStyle]:
    """:func:`style_map` over every variant@backend in ``df`` (failed rows included, so a series keeps its
    colour whether or not a filter dropped another's rows), series of one kernel in distinct colours."""
    if df is None or not len(df) or not {"variant", "backend"} <= set(df.columns):
        return {}
    n = len(df)
    runtimes = df["runtime"].tolist() if "runtime" in df else [None] * n
    kernels = df["kernel"].tolist() if "kernel" in df else [None] * n
    # each distinct (variant, backend, runtime, kernel) once, in order of first appearance (per row, the
    # series keys of a million rows took seconds)
    combos = dict.fromkeys(zip(df["variant"].tolist(), df["backend"].tolist(), runtimes, kernels, strict=True))
    labels = {}
    for v, b, rt in dict.fromkeys((v, b, rt) for v, b, rt, _ in combos):
        name = series_name(v, b, rt)
        if name != series_key(v, b):
            labels[series_key(v, b)] = name
    keys = [series_key(v, b) for v, b, _, _ in combos]
    together = None
    if "kernel" in df:  # the series drawn together: one kernel's (rows without a kernel in none)
        groups: dict[Any, set[str]] = {}
        for (_, _, _, kernel), key in zip(combos, keys, strict=True):
            if not pd.isna(kernel):
                groups.setdefault(kernel, set()).add(key)
        together = list(groups.values())
    return style_map(keys, labels, together)


def display_name(key: str, styles: Mapping[str, SeriesStyle] | None = None) -> str:
    """The legend name of the series ``key`` under ``styles`` (its label, else the key itself)."""
    style = (styles or {}).get(key)
    return style.label if style is not None and style.label else key


def parse_baseline(baseline: Any) -> tuple[str | None, str | None]:
    """(variant, backend) from None, "variant", "variant @ backend" / "variant@backend" or a mapping."""
    if baseline is None:
        return None, None
    if isinstance(baseline, Mapping):
        return baseline.get("variant") or None, baseline.get("backend") or None
    if isinstance(baseline, (tuple, list)):
        return (baseline[0] or None), (baseline[1] if len(baseline) > 1 else None) or None
    variant, _, backend = str(baseline).partition("@")
    return variant.strip() or None, backend.strip() or None

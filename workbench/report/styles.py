"""One colour and one marker per variant@backend, the same in every figure that shows it.

A series that changes colour between two figures makes a reader match legends instead of reading
lines. The colour comes from the series' place among all series of the report (sorted, so the same
set always gives the same colours and no two collide below :data:`PALETTE`'s length); the marker comes
from the backend's runtime, so numpy is always a circle and OpenCL a diamond. The dashboard can call
:func:`style_map` with its measured series and get the report's look.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..backends import registry

#: tab10, then the darker/lighter tab20 partners: 20 colours distinct enough side by side.
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")
#: Marker per runtime family (the backend name up to its first '-').
BACKEND_MARKERS: dict[str, str] = {"numpy": "o", "numba": "s", "torch": "^", "opencl": "D", "cupy": "v",
                                   "triton": "P", "vulkan": "X", "wgpu": "X"}
OTHER_MARKERS: tuple[str, ...] = ("*", "h", "<", ">", "p", "8")
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


def backend_runtime(backend: object) -> str:
    """The runtime a backend name belongs to (``vulkan`` -> ``wgpu``; a name this install does not know: its
    family, the part before the first '-')."""
    try:
        return registry.get(str(backend)).runtime
    except ValueError:
        return str(backend).split("-")[0].lower()


def series_name(variant: object, backend: object, runtime: object = None) -> str:
    """A series' name for a reader: its key, or, where the code ran on another runtime than its backend's
    (a ``quick()`` callable compiled by numba and given numpy arrays), ``"variant (numba, numpy inputs)"``, so
    no legend says numba code ran on numpy."""
    rt = "" if runtime is None or (isinstance(runtime, float) and runtime != runtime) else str(runtime)
    if rt and rt != backend_runtime(backend):
        return f"{variant} ({rt}, {backend} inputs)"
    return series_key(variant, backend)


def _marker(key: str) -> str:
    backend = key.partition(" @ ")[2]
    family = backend.split("-")[0].lower()
    return BACKEND_MARKERS.get(family) or OTHER_MARKERS[zlib.crc32(family.encode()) % len(OTHER_MARKERS)]


def style_map(keys: Iterable[str], labels: Mapping[str, str] | None = None) -> dict[str, SeriesStyle]:
    """A style per series key: colours by sorted position (no two alike up to 20 series), markers by runtime;
    ``labels`` (key -> legend name) where a series' name is not its key."""
    uniq = sorted({str(k) for k in keys})
    labels = labels or {}
    return {k: SeriesStyle(PALETTE[i % len(PALETTE)], _marker(k), labels.get(k)) for i, k in enumerate(uniq)}


def series_style(key: str, styles: Mapping[str, SeriesStyle] | None = None) -> SeriesStyle:
    """The style of one series: from ``styles`` when it has the key, else from a hash of the key
    (stable across processes, but two series may then share a colour: pass a :func:`style_map`)."""
    if styles and key in styles:
        return styles[key]
    return SeriesStyle(PALETTE[zlib.crc32(key.encode()) % len(PALETTE)], _marker(key))


def styles_for(df: pd.DataFrame) -> dict[str, SeriesStyle]:
    """:func:`style_map` over every variant@backend in ``df`` (failed rows included, so a series keeps its
    colour whether or not a filter dropped another's rows)."""
    if df is None or not len(df) or not {"variant", "backend"} <= set(df.columns):
        return {}
    runtimes = df["runtime"] if "runtime" in df else [None] * len(df)
    labels = {}
    for v, b, rt in dict.fromkeys(zip(df["variant"], df["backend"], runtimes, strict=True)):
        name = series_name(v, b, rt)
        if name != series_key(v, b):
            labels[series_key(v, b)] = name
    return style_map((series_key(v, b) for v, b in zip(df["variant"], df["backend"], strict=True)), labels)


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

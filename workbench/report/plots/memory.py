"""Peak memory of one untimed call against size, drawn only where the series' memories differ."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.report.plots.frame import finish, new_figure, split_ok
from workbench.report.plots.metrics import METRIC_LABELS
from workbench.report.plots.series import (
    for_kernel,
    kernel_names,
    line_style,
    pooled_legend,
    pooled_over_runs,
    run_order,
    series_columns,
    series_label,
)
from workbench.report.plots.size_axis import set_plain_axis, set_size_axis, with_x
from workbench.report.styles import SeriesStyle, styles_for

#: Memory plots are drawn only where series differ by more than this factor at some size.
MEMORY_DIFFERS = 1.25


def memories_differ(df: pd.DataFrame, factor: float = MEMORY_DIFFERS) -> bool:
    """Whether a memory plot would show anything: at some size (of some run) the series' peak memories
    differ by more than ``factor``. Otherwise the lines lie on top of each other and say nothing."""
    ok, _ = split_ok(df)
    if ok.empty or "peak_mem_bytes" not in ok:
        return False
    mem = pd.to_numeric(ok["peak_mem_bytes"], errors="coerce")
    ok = ok.assign(_mem=mem)[mem > 0]
    keys = [c for c in ("run_id", "kernel", "dtype", "params", "size") if c in ok]
    if ok.empty or not keys:
        return False
    spread = ok.groupby(keys, dropna=False)["_mem"].agg(lambda m: m.max() / m.min() if len(m) > 1 else 1.0)
    return bool((spread > factor).any())


def plot_memory(df: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None,
                styles: Mapping[str, SeriesStyle] | None = None, run_names: Mapping[str, str] | None = None
                ) -> Figure:
    """Peak memory of one untimed call against size, per variant/backend, by the backend's method."""
    ok, bad = split_ok(df)
    styles = styles if styles is not None else styles_for(df)
    kernels = kernel_names(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        k = for_kernel(ok, kernel)
        k = k.dropna(subset=["peak_mem_bytes"]) if "peak_mem_bytes" in k else k.iloc[0:0]
        a.set_ylabel(METRIC_LABELS["peak_mem_bytes"])
        a.set_title(title or (f"{kernel}: peak memory" if kernel else "peak memory"))
        if k.empty:
            a.set_xlabel("size")
            a.text(0.5, 0.5, "no memory measurements", ha="center", va="center", transform=a.transAxes)
            continue
        data, axis = with_x(k)
        data["peak_mem_bytes"] = pd.to_numeric(data["peak_mem_bytes"], errors="coerce")
        data = pooled_over_runs(data, ["variant", "backend", "dtype", "cache", "_group", "_x"])
        unit, scale = _bytes_unit(data["peak_mem_bytes"])
        a.set_ylabel(f"{METRIC_LABELS['peak_mem_bytes']} ({unit})")
        cols = series_columns(data)
        runs = run_order(data)
        for key, g in data.groupby([*cols, "_group"], sort=True, dropna=False):
            g = g.sort_values("_x")
            style, ls = line_style(key[:-1], cols, styles, runs)
            methods = sorted({_short_method(str(m)) for m in g.get("mem_method", pd.Series(dtype=str)).dropna() if m})
            label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
            a.plot(g["_x"], g["peak_mem_bytes"] / scale, marker=style.marker, ms=4, color=style.color, ls=ls,
                   label=label + (f" [{', '.join(methods)}]" if methods else ""))
        pooled_legend(a, data)
        set_size_axis(a, data["_x"], axis, data.attrs.get("companions"))
        set_plain_axis(a, data["peak_mem_bytes"] / scale)
        a.grid(True, alpha=0.3)
    return finish(fig, bad, layout=ax is None)


def _short_method(method: str) -> str:
    """The head of a memory-method description ("tracemalloc (python + numpy ...)" -> "tracemalloc")."""
    if method.startswith("inputs+outputs") and " by " in method:  # the harness's prefix: name the method
        method = method.split(" by ", 1)[1]
    head = method.split("(")[0].split(";")[0].strip()
    return head[:40] or method[:40]


def _bytes_unit(values: pd.Series) -> tuple[str, float]:
    """The binary unit that keeps the largest value readable, and its size in bytes."""
    top = float(pd.to_numeric(values, errors="coerce").max() or 0)
    unit, scale = "B", 1.0
    for u in ("KiB", "MiB", "GiB", "TiB"):
        if top >= scale * 1024:
            unit, scale = u, scale * 1024
    return unit, scale

"""Line plots against size: a metric per series with its quartile band, and one kernel at a glance."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from workbench.judge.dips import samples_at_speed
from workbench.judge.stats import round_weighted_quantiles
from workbench.report.plots.frame import finish, new_figure, split_ok
from workbench.report.plots.memory import plot_memory
from workbench.report.plots.metrics import INVERSE_TIME, METRIC_LABELS, resolve_metric
from workbench.report.plots.series import (
    MAX_RUN_LINES,
    disturbed_legend,
    disturbed_mask,
    for_kernel,
    kernel_names,
    line_style,
    mark_disturbed,
    mark_noisy,
    noisy_legend,
    noisy_mask,
    run_order,
    series_columns,
    series_label,
)
from workbench.report.plots.size_axis import positive_finite, set_plain_axis, set_size_axis, set_time_axis, with_x
from workbench.report.plots.speedup import plot_speedup
from workbench.report.styles import LINESTYLES, SeriesStyle, styles_for


def plot_metric(df: pd.DataFrame, metric: str = "median_s", *, baseline: Any = None, ax: Axes | None = None,
                title: str | None = None, bands: bool = True, styles: Mapping[str, SeriesStyle] | None = None,
                run_names: Mapping[str, str] | None = None) -> Figure:
    """One line per variant/backend of ``metric`` against size, one panel per kernel.

    ``metric`` is a column (``median_s``, ``gbps``, ``gflops``, ``pct_peak_bw`` ...)
    or an alias (``time``, ``GB/s``, ``% of peak``); ``speedup`` draws speed-ups
    against ``baseline`` with confidence intervals instead.
    """
    metric = resolve_metric(metric)
    styles = styles if styles is not None else styles_for(df)
    if metric == "speedup":
        return plot_speedup(df, baseline=baseline, ax=ax, title=title, styles=styles, run_names=run_names)
    if metric == "peak_mem_bytes":
        return plot_memory(df, ax=ax, title=title, styles=styles, run_names=run_names)
    ok, bad = split_ok(df)
    kernels = kernel_names(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        draw_metric(a, for_kernel(ok, kernel), metric, bands, styles, run_names)
        a.set_title(title or (f"{kernel}: {METRIC_LABELS[metric]}" if kernel else METRIC_LABELS[metric]))
    return finish(fig, bad, layout=ax is None)


def draw_metric(ax: Axes, ok: pd.DataFrame, metric: str, bands: bool = True,
                styles: Mapping[str, SeriesStyle] | None = None, run_names: Mapping[str, str] | None = None) -> bool:
    """``metric`` of one kernel's ok rows on ``ax``: a line per series (and per splitting parameter), or, past
    :data:`MAX_RUN_LINES` runs, per series over its runs (returns True then)."""
    ax.set_ylabel("time" if metric == "median_s" else METRIC_LABELS[metric])
    if ok.empty or metric not in ok or pd.to_numeric(ok[metric], errors="coerce").isna().all():
        ax.set_xlabel("size")
        ax.text(0.5, 0.5, f"no {METRIC_LABELS[metric]} values", ha="center", va="center", transform=ax.transAxes)
        return False
    data, axis = with_x(ok)
    if not len(positive_finite(data["_x"])):  # rows stored without params (an import): no size to draw against
        ax.set_xlabel("size")
        ax.text(0.5, 0.5, "no sizes (rows stored without params)", ha="center", va="center", transform=ax.transAxes)
        return False
    data[metric] = pd.to_numeric(data[metric], errors="coerce")
    cols = series_columns(data)
    runs = run_order(data)
    groups = list(dict.fromkeys(data["_group"]))
    pooled = "run_id" in cols and len(runs) > MAX_RUN_LINES
    if pooled:
        _draw_pooled_runs(ax, data, metric, [c for c in cols if c != "run_id"], styles, len(runs))
    drawn = _Drawn()
    for key, g in [] if pooled else data.groupby([*cols, "_group"], sort=True, dropna=False):
        g = g.dropna(subset=[metric]).sort_values("_x")
        if g.empty:
            continue
        style, ls = line_style(key[:-1], cols, styles, runs)
        if len(groups) > 1 and len(runs) <= 1:
            ls = LINESTYLES[groups.index(key[-1]) % len(LINESTYLES)]
        label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
        _draw_series(ax, g, metric, style, ls, label, bands, drawn)
    if drawn.banded:
        ax.plot([], [], ls="none", label=BAND_LABEL)  # what the shading is, in the legend
    if drawn.lone:
        ax.plot([], [], ls="none", marker="|", ms=9, mew=1.4, color="#777", label=LONE_BAND_LABEL)
    noisy_legend(ax, drawn.noisy)
    disturbed_legend(ax, drawn.disturbed)
    set_size_axis(ax, data["_x"], axis, data.attrs.get("companions"))
    if metric == "median_s":
        set_time_axis(ax, data[metric])
    else:
        set_plain_axis(ax, data[metric], None if metric.startswith("pct") else 20)
        if metric.startswith("pct") and data[metric].max() > 60:  # the ceiling itself, so "above it" shows
            ax.axhline(100.0, color="#777", lw=1, ls=":", zorder=1)
        if not metric.startswith("pct") or ax.get_yscale() == "linear":
            ax.set_ylim(bottom=0) if ax.get_yscale() == "linear" else None
    ax.grid(True, alpha=0.3)
    return pooled


#: What the shaded band is (the legend says it): the interquartile range of the samples, the spread a summary
#: table prints as "median ± IQR". Worded without the table: tutorial 01 shows the figure with no such column.
#: It says where it cannot be seen: 04's legend named a band that no point showed, each narrower than its line.
#: Measured at each point only: between two sizes the shading joins their ends (01's reader took a wedge between
#: 2^12 and 2^16 for spread at sizes never measured).
#: In lines, so the legend beside the axes keeps its width (one line of 121 characters ran over the axes).
BAND_LABEL = ("band: IQR of the kept rounds' samples (q1 to q3)\nat each measured size, joined between them;\n"
              "unseen where narrower than the line")
#: The band of a point with no banded neighbour, drawn as a bar (a fill between one point has no width: 03's
#: portable 2^20 and 08's torch n=64 had a table IQR and no visible band).
LONE_BAND_LABEL = "band: a bar where a point has no banded neighbour"


@dataclass
class _Drawn:
    """What a panel's series drew, for its legend: noisy and disturbed points, bands, lone-point bars."""

    noisy: int = 0
    disturbed: int = 0
    banded: bool = False
    lone: bool = False


def _draw_series(ax: Axes, g: pd.DataFrame, metric: str, style: SeriesStyle, ls: str, label: str, bands: bool,
                 drawn: _Drawn) -> None:
    """One series' line through its readable cells, its band, hollow noisy points and crossed disturbed ones.

    A disturbed cell (:func:`~workbench.report.plots.series.disturbed_mask`, the tables' "disturbed") is a cross
    off the line with no band: its median is no value to read, so no segment leads to or from it."""
    x, y = g["_x"].to_numpy(float), g[metric].to_numpy(float)
    disturbed = disturbed_mask(g)
    # a series every cell of which is disturbed draws no line and no marker of its own: its legend entry shows what
    # it does draw, an x in its colour (07's legend gave run A's numba a line and a square it drew nowhere)
    crossed = bool(len(g)) and bool(disturbed.all())
    ax.plot(x, np.where(disturbed, np.nan, y), marker="x" if crossed else style.marker, ms=4, color=style.color,
            ls="none" if crossed else ls, label=label)
    band = quartile_band(g, metric) if bands else None
    if band is not None and np.isfinite(band[0]).any():
        drawn.lone |= draw_band(ax, x, band[0], band[1], style.color)
        drawn.banded = True
    noisy = noisy_mask(g) & ~disturbed
    if noisy.any():
        mark_noisy(ax, x[noisy], y[noisy], style.color, marker=style.marker)
        drawn.noisy += int(noisy.sum())
    if disturbed.any():
        mark_disturbed(ax, x[disturbed], y[disturbed], style.color, span=quartile_span(g[disturbed], metric))
        drawn.disturbed += int(disturbed.sum())


def draw_band(ax: Axes, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: Any) -> bool:
    """The band from ``lo`` to ``hi``: shaded, with an outline in the series' colour so a band over another
    (03: portable's under numpy's at 2^20) still shows its edges; a point whose neighbours have no band gets a
    bar instead, which a fill cannot draw. Returns whether any bar was drawn."""
    ax.fill_between(x, lo, hi, facecolor=to_rgba(color, 0.15), edgecolor=to_rgba(color, 0.55), linewidth=0.7)
    ok = np.isfinite(lo) & np.isfinite(hi)
    lone = ok & ~np.r_[False, ok[:-1]] & ~np.r_[ok[1:], False]
    if not lone.any():
        return False
    ax.vlines(x[lone], lo[lone], hi[lone], colors=[to_rgba(color, 0.7)], linewidth=1.4, zorder=2.5)
    ax.plot(np.r_[x[lone], x[lone]], np.r_[lo[lone], hi[lone]], ls="none", marker="_", ms=7, mew=1.4,
            color=to_rgba(color, 0.7), zorder=2.5)
    return True


def _draw_pooled_runs(ax: Axes, data: pd.DataFrame, metric: str, cols: list[str],
                      styles: Mapping[str, SeriesStyle] | None, n_runs: int) -> None:
    """One line per series (and splitting parameter): the median of ``metric`` over the runs at each size, and
    a band from its smallest to its largest value there."""
    pooled = (data.dropna(subset=[metric]).groupby([*cols, "_group", "_x"], sort=True, dropna=False)[metric]
              .agg(["median", "min", "max"]).reset_index())
    groups = list(dict.fromkeys(pooled["_group"]))
    for key, g in pooled.groupby([*cols, "_group"], sort=True, dropna=False):
        style, _ = line_style(key[:-1], cols, styles, [])
        ls = LINESTYLES[groups.index(key[-1]) % len(LINESTYLES)] if len(groups) > 1 else "-"
        label = series_label(key[:-1], cols, None, styles) + (f", {key[-1]}" if key[-1] else "")
        ax.plot(g["_x"], g["median"], marker=style.marker, ms=3, color=style.color, ls=ls, label=label)
        ax.fill_between(g["_x"], g["min"], g["max"], color=style.color, alpha=0.15, linewidth=0)
    ax.plot([], [], ls="none", label=f"median of {n_runs} runs; band: their range")


def quartile_band(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Lower/upper edge of the interquartile band of ``metric`` (None when quartiles are unknown): in time, the
    table's own "± IQR" (``iqr_s``, the round-weighted quartiles of all rounds' samples), exactly as wide, placed
    around the line as the samples lie around their own median."""
    if not {"q1_s", "q3_s", "median_s"} <= set(g.columns):
        return None
    q1, q3, med = (pd.to_numeric(g[c], errors="coerce").to_numpy(float) for c in ("q1_s", "q3_s", "median_s"))
    if np.isnan(q1).all() or np.isnan(q3).all():
        return None
    # The line is the median of the rounds' medians; the quartiles are of all samples pooled. Where rounds
    # drifted apart those two need not agree (the line ran outside its band), so the quartiles are moved by the
    # line's distance from the pooled median: the band keeps the table's width (q3 - q1). Scaling them instead
    # drew 01's "116 µs ± 47.9 µs" as a 60 µs band (99-159 µs) and 08's "26 µs ± 12.3 µs" as a 9.6 µs one.
    shift = med - _pooled_medians(g, med)
    lo, hi = q1 + shift, q3 + shift
    q1, q3 = np.where(lo > 0, lo, q1), np.where(lo > 0, hi, q3)  # a band moved past zero stays where it was
    # no band where the summary table withholds the spread as disturbed (its quartiles span ±50% of its median
    # or more, report.summary): 08 drew bands for cells its table read "disturbed"
    withheld = disturbed_mask(g)
    q1, q3 = np.where(withheld, np.nan, q1), np.where(withheld, np.nan, q3)
    return _in_metric(g, metric, q1, q3, med)


def quartile_span(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Each row's quartiles in ``metric``'s unit, as stored (no band is drawn of them): all a disturbed cell is drawn
    as (:func:`~workbench.report.plots.series.mark_disturbed`); where a row stores its IQR (``iqr_s``) but no
    quartiles, the IQR centred on its median (the disturbed rule reads either). None where neither is known."""
    if "median_s" not in g or not ({"q1_s", "q3_s"} <= set(g.columns) or "iqr_s" in g):
        return None
    med = pd.to_numeric(g["median_s"], errors="coerce").to_numpy(float)
    nan = np.full(len(g), np.nan)
    q1, q3 = (pd.to_numeric(g[c], errors="coerce").to_numpy(float) if c in g else nan for c in ("q1_s", "q3_s"))
    half = pd.to_numeric(g["iqr_s"], errors="coerce").to_numpy(float) / 2 if "iqr_s" in g else nan
    gone = ~(np.isfinite(q1) & np.isfinite(q3))
    q1, q3 = np.where(gone, med - half, q1), np.where(gone, med + half, q3)
    return _in_metric(g, metric, q1, q3, med)


def _in_metric(g: pd.DataFrame, metric: str, q1: np.ndarray, q3: np.ndarray,
               med: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Quartile times ``q1``, ``q3`` (seconds) in ``metric``'s unit: as they are for time, inverted about each
    row's ``metric`` value for a rate (the slower quartile gives the lower rate); None for another metric."""
    if metric == "median_s":
        return q1, q3
    if metric in INVERSE_TIME:
        v = g[metric].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return v * med / q3, v * med / q1
    return None


def _pooled_medians(g: pd.DataFrame, fallback: np.ndarray) -> np.ndarray:
    """Median of each row's pooled samples (``samples_s``), weighted as its quartiles are (every round the same,
    where ``round_sizes`` splits the samples: :func:`~workbench.judge.stats.round_weighted_quartiles`), or
    ``fallback`` where they are not stored. An unweighted median beside round-weighted quartiles moved 04's band
    off its line (numba-tiled at 256³: a band of 11-65 GFLOP/s under a point at 70)."""
    if "samples_s" not in g:
        return fallback
    out = fallback.copy()
    none = [None] * len(g)
    sizes_col = g["round_sizes"] if "round_sizes" in g else none
    medians_col = g["round_medians_s"] if "round_medians_s" in g else none
    slow_col = g["round_host_slowdowns"] if "round_host_slowdowns" in g else none
    for i, (text, sizes_text, medians, slow) in enumerate(zip(g["samples_s"], sizes_col, medians_col, slow_col,
                                                               strict=True)):
        # the rounds the quartiles are of (judge.dips.samples_at_speed): a round set aside while the host ran slow
        # is in neither the quartiles nor this median
        samples, sizes = samples_at_speed(_json_list(text), [int(n) for n in _json_list(sizes_text)],
                                          _json_list(medians), _json_list(slow))
        if not samples:
            continue
        weighted = round_weighted_quantiles(samples, [int(n) for n in sizes], (0.5,)) if sizes else None
        pooled = weighted[0] if weighted else float(np.median(np.asarray(samples, dtype=float)))
        if pooled > 0:
            out[i] = pooled
    return out


def _json_list(text: Any) -> list[float]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def plot_time(df: pd.DataFrame, **kw: Any) -> Figure:
    """Median time per call against size, with the q1–q3 band."""
    return plot_metric(df, "median_s", **kw)


def plot_throughput(df: pd.DataFrame, metric: str = "gbps", **kw: Any) -> Figure:
    """Throughput (GB/s, GFLOP/s or % of peak) against size, with the quartile band."""
    return plot_metric(df, metric, **kw)


def efficiency_metric(ok: pd.DataFrame) -> str:
    """What says how well a kernel uses the machine: % of its bounding ceiling where rows carry one,
    else GB/s (memory-bound) or GFLOP/s (compute-bound)."""
    compute = "bound" in ok and (ok["bound"].dropna() == "compute-bound").any()
    pct = "pct_peak_flops" if compute else "pct_peak_bw"
    if pct in ok and pd.to_numeric(ok[pct], errors="coerce").notna().any():
        return pct
    return "gflops" if compute else "gbps"


def plot_kernel(df: pd.DataFrame, kernel: str | None = None, *, styles: Mapping[str, SeriesStyle] | None = None,
                run_names: Mapping[str, str] | None = None) -> Figure:
    """One kernel at a glance: time per call beside its efficiency (% of ceiling, or throughput), one
    legend for both; the title names the kernel."""
    kernel = kernel or kernel_names(df)[0]
    k = for_kernel(df, kernel)
    ok, bad = split_ok(k)
    styles = styles if styles is not None else styles_for(df)
    fig, axes = new_figure(2, width=4.3, height=3.0)
    pooled = draw_metric(axes[0], ok, "median_s", True, styles, run_names)
    axes[0].set_title("time per call (median of runs, their range)" if pooled else "time per call (median, q1–q3 band)",
                      fontsize=10)
    metric = efficiency_metric(ok) if len(ok) else "gbps"
    draw_metric(axes[1], ok, metric, False, styles, run_names)
    axes[1].set_title(METRIC_LABELS[metric] + (" (higher is better)" if metric in INVERSE_TIME else ""),
                      fontsize=10)
    fig.suptitle(str(kernel), fontsize=12, fontweight="bold", x=0.01, ha="left")
    return finish(fig, bad)

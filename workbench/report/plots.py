"""Figures from tidy measurement rows: time, throughput, speed-up, roofline, memory.

Every function takes rows shaped like ``docs/measurement-record.md`` and returns
a :class:`matplotlib.figure.Figure` built without pyplot, so nothing is shown,
no global figure list grows while a report renders dozens of plots, and it
works headless and from the dashboard's worker thread. Rows whose status is not
``ok`` never become points; they are listed under the axes so a missing line is
never a silent one.

How they read: the x axis is one real size parameter, named (``cols``, one line
per ``rows``; ``m = n = k`` for square gemm), with ticks at the measured sizes
(``2¹⁶`` where sizes are powers of two); times carry their own unit (ns, µs,
ms); legends sit beside the axes; and a series keeps one colour and marker
(:func:`series_style`, :func:`style_map`) in every figure given the same
``styles``. Runs are named by ``run_names`` (run id -> name), never by id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator

from workbench.core.frames import where_rows
from workbench.core.status import Status
from workbench.core.units import fmt_bytes, fmt_tick_time
from workbench.judge.compare import speedup_vs_baseline
from workbench.report.sizes import XAxis, choose_x_axis, is_power_of_two, params_frame, tick_text
from workbench.report.styles import (
    LINESTYLES,
    SeriesStyle,
    display_name,
    parse_baseline,
    series_key,
    series_name,
    series_style,
    style_map,
    styles_for,
)
from workbench.roofs.ceilings import ceiling_suspect, is_noisy, llc_of
from workbench.roofs.model import (
    AUTO_PROBE,
    CACHE_LEVELS,
    MEASURED,
    PUBLISHED,
    RoofKey,
    RoofKind,
    RoofSet,
    above_top_roof,
    resolve_roofs,
)

__all__ = ["SeriesStyle", "memories_differ", "plot_kernel", "plot_memory", "plot_metric", "plot_roofline",
           "plot_speedup", "plot_throughput", "plot_time", "series_key", "series_style", "style_map",
           "styles_for"]

#: Metric names (and friendly aliases) -> contract column or derived quantity.
METRIC_ALIASES: dict[str, str] = {
    "time": "median_s", "median_s": "median_s", "s": "median_s",
    "gb/s": "gbps", "gbps": "gbps", "bandwidth": "gbps",
    "gflop/s": "gflops", "gflops": "gflops",
    "% of peak": "pct_peak_bw", "pct_peak_bw": "pct_peak_bw", "pct_peak_flops": "pct_peak_flops",
    "pct_published": "pct_published",
    "speed-up": "speedup", "speedup": "speedup",
    "memory": "peak_mem_bytes", "peak_mem_bytes": "peak_mem_bytes",
}
METRIC_LABELS: dict[str, str] = {
    "median_s": "time per call (median)", "gbps": "GB/s", "gflops": "GFLOP/s",
    "pct_peak_bw": "% of the GB/s ceiling", "pct_peak_flops": "% of the GFLOP/s ceiling",
    "pct_published": "% of published peak", "speedup": "speed-up vs baseline (x)",
    "peak_mem_bytes": "peak memory",
}
#: Metrics that are (something) / median time: their quartile band is value * median / q3 .. / q1.
INVERSE_TIME = {"gbps", "gflops", "pct_peak_bw", "pct_peak_flops", "pct_published"}
MAX_LISTED = 8
MAX_TICKS = 8
ROOF_COLORS = ("#222", "#7a1f5c", "#1f5c7a", "#5c7a1f")
LEGEND_FONT = 7.5
#: Legend entry of the hollow rings over noisy points (one per figure, whatever its panels count).
NOISY_LABEL = "hollow: noisy cell"
#: Memory plots are drawn only where series differ by more than this factor at some size.
MEMORY_DIFFERS = 1.25


def resolve_metric(metric: str) -> str:
    key = METRIC_ALIASES.get(str(metric).strip().lower())
    if key is None:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(sorted(set(METRIC_ALIASES)))}")
    return key


# -- helpers ----------------------------------------------------------------------------------

def new_figure(n_axes: int = 1, width: float = 5.6, height: float = 3.4) -> tuple[Figure, list[Axes]]:
    cols = 1 if n_axes == 1 else 2
    rows = (n_axes + cols - 1) // cols
    fig = Figure(figsize=(width * cols, height * rows))  # fixed margins (see finish): layout engines cost 2-3x
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(n_axes)]
    return fig, axes


def split_ok(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows that can be plotted, rows that cannot and must be listed)."""
    if "status" not in df:
        return df, df.iloc[0:0]
    ok = df["status"] == Status.OK
    return df[ok], df[~ok]


def series_columns(df: pd.DataFrame) -> list[str]:
    """Columns that tell lines apart: variant and backend, plus dtype, cache or run where one series
    has several (the device is the backend's, so naming it on every line only repeats it)."""
    cols = ["variant", "backend"]
    for extra in ("dtype", "cache", "run_id"):
        if extra in df and len(df) and df.groupby(["variant", "backend"])[extra].nunique(dropna=False).max() > 1:
            cols.append(extra)
    return cols


def series_label(key: Any, cols: list[str], run_names: Mapping[str, str] | None = None,
                 styles: Mapping[str, SeriesStyle] | None = None) -> str:
    """A line's legend text: the series' name under ``styles`` (:func:`~workbench.report.styles.display_name`),
    then what else tells its lines apart (dtype, cache, run)."""
    key = key if isinstance(key, tuple) else (key,)
    d = dict(zip(cols, key, strict=False))
    extras = [str((run_names or {}).get(str(d[c]), d[c])) if c == "run_id" else str(d[c]) for c in cols[2:]]
    name = display_name(series_key(d.get("variant"), d.get("backend")), styles)
    return name + (f" ({', '.join(extras)})" if extras else "")


def _line_style(key: Any, cols: list[str], styles: Mapping[str, SeriesStyle] | None,
                run_order: list[str]) -> tuple[SeriesStyle, str]:
    """The series' colour/marker, and a line style that tells its runs apart."""
    d = dict(zip(cols, key if isinstance(key, tuple) else (key,), strict=False))
    style = series_style(series_key(d.get("variant"), d.get("backend")), styles)
    run = str(d.get("run_id", ""))
    ls = LINESTYLES[run_order.index(run) % len(LINESTYLES)] if run in run_order else "-"
    return style, ls


def _run_order(df: pd.DataFrame) -> list[str]:
    return [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df and len(df) else []


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


def _legend_width(labels: list[str]) -> float:
    """Inches a legend of these labels takes beside the axes (7.5 pt text: ~0.058 in per character)."""
    return 0.0 if not labels else min(4.2, 0.45 + 0.052 * max(len(s) for s in labels))


def _figure_legend(fig: Figure, axes: list[Axes]) -> float:
    """One legend for the whole figure, right of the axes (never over the data); returns its width."""
    handles, labels = [], []
    for a in axes:
        for h, lab in zip(*a.get_legend_handles_labels(), strict=True):
            if lab.startswith(NOISY_LABEL) and any(x.startswith(NOISY_LABEL) for x in labels):
                i = next(i for i, x in enumerate(labels) if x.startswith(NOISY_LABEL))  # one entry, the panels'
                labels[i] = max(labels[i], lab, key=lambda t: int("".join(filter(str.isdigit, t)) or 0))  # largest
                continue
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    if not labels:
        return 0.0
    fig.legend(handles, labels, loc="upper right", fontsize=LEGEND_FONT, frameon=False, borderaxespad=0.4)
    return _legend_width(labels)


def finish(fig: Figure, bad: pd.DataFrame, layout: bool = True, notes: list[str] | None = None,
           legend: bool = True) -> Figure:
    """List the rows left out of the figure (status and reason) under the axes, put the legend beside the
    axes, and set the margins.

    ``notes`` (e.g. why points sit above a roofline) go under the axes first, in dark orange.
    ``layout`` False leaves the size, margins and legend of a figure the caller made (``ax=`` given) alone.
    Both are wrapped at word boundaries to the figure's width, so none is cut at its edge or mid-word.
    """
    entries = [f"{r.get('kernel')}: {series_name(r.get('variant'), r.get('backend'), r.get('runtime'))} "
               f"{r.get('size_label') or ''} — {r.get('status')}: {_first_clause(r.get('message'))}"
               for _, r in bad.head(MAX_LISTED).iterrows()]
    if len(bad) > MAX_LISTED:
        entries.append(f"... and {len(bad) - MAX_LISTED} more")
    w, h = fig.get_size_inches()
    legend_w = _figure_legend(fig, list(fig.axes)) if layout and legend else 0.0
    chars = _chars_across(w + legend_w)
    lines = [ln for e in entries for ln in _wrap(e, chars - len("not plotted: "))]
    notes = [ln for n in (notes or []) for ln in _wrap(n, chars)]
    line_h = 0.14
    bad_h = line_h * (len(lines) + 1) if lines else 0.0
    notes_h = line_h * (len(notes) + 0.5) if notes else 0.0
    note_h = bad_h + notes_h
    if not layout:
        if lines:
            fig.text(0.01, 0.01, "not plotted: " + "\n".join(lines), fontsize=7, color="#a33", va="bottom")
        if notes:
            fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", va="bottom")
        for a in fig.axes:
            if a.get_legend_handles_labels()[0]:
                a.legend(fontsize=LEGEND_FONT)
        return fig
    axes = list(fig.axes)
    fig.set_size_inches(w + legend_w, h + note_h)
    w, h = w + legend_w, h + note_h
    if lines:
        fig.supxlabel("not plotted: " + "\n".join(lines), fontsize=7, color="#a33", ha="left", x=0.01, y=0.01,
                      va="bottom")
    if notes:
        fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", ha="left", va="bottom")
    has_ticks2 = any("\n" in t.get_text() for a in axes for t in [*a.get_xticklabels(), a.xaxis.label])
    top = 0.62 if fig._suptitle is not None else 0.35  # noqa: SLF001 — matplotlib keeps no public accessor
    # margins in inches, so panels keep their size whatever the notes and legend add
    fig.subplots_adjust(left=0.8 / w, right=1 - (0.15 + legend_w) / w, top=1 - top / h,
                        bottom=(0.55 + (0.15 if has_ticks2 else 0) + note_h) / h, wspace=0.3 if len(axes) > 1
                        else 0.2, hspace=0.5)
    return fig


def noisy_mask(df: pd.DataFrame) -> np.ndarray:
    """Which rows are noisy: their ``noisy`` flag, or (rows stored before it) relative spread above 10%."""
    if not len(df):
        return np.zeros(0, bool)
    # the two columns the flag reads, not whole rows (called for every series of every figure)
    flags = df["noisy"].tolist() if "noisy" in df else [None] * len(df)
    spreads = df["rel_spread"].tolist() if "rel_spread" in df else [None] * len(df)
    return np.array([is_noisy({"noisy": f, "rel_spread": s}) for f, s in zip(flags, spreads, strict=True)], dtype=bool)


def _mark_noisy(ax: Axes, x: Any, y: Any, color: Any, size: float = 7.0) -> None:
    """Hollow rings over noisy points (white inside, the series colour around)."""
    ax.plot(x, y, ls="none", marker="o", ms=size, mfc="white", mec=color, mew=1.3, zorder=4)


def _noisy_legend(ax: Axes, n: int) -> None:
    if n:
        ax.plot([], [], ls="none", marker="o", ms=6, mfc="white", mec="#555", mew=1.3,
                label=f"{NOISY_LABEL} ({n})")


def _kernels(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["kernel"])) if "kernel" in df and len(df) else [""]


def _for_kernel(df: pd.DataFrame, kernel: str) -> pd.DataFrame:
    return where_rows(df, df["kernel"] == kernel) if kernel and "kernel" in df else df


# -- the size axis ----------------------------------------------------------------------------

def with_x(df: pd.DataFrame) -> tuple[pd.DataFrame, XAxis]:
    """``df`` with columns ``_x`` (the axis parameter) and ``_group`` ("rows=256" for a parameter that
    splits lines; "" otherwise), and the axis chosen for it."""
    params = params_frame(df)
    axis = choose_x_axis(params)
    out = df.copy()
    out["_x"] = pd.to_numeric(params[axis.name], errors="coerce") if axis.name in params else np.nan
    groups = [[f"{c}={v}" for v in params[c].tolist()] for c in axis.group_by]
    out["_group"] = [" ".join(g) for g in zip(*groups, strict=True)] if groups else ""
    companions = {}
    for c in axis.companions:
        companions[c] = dict(zip(out["_x"], params[c], strict=True))
    out.attrs["companions"] = companions
    return out, axis


#: Characters of tick labels that fit side by side along a panel's size axis (a panel is about 3 inches wide).
AXIS_CHARS = 40


def ticks_that_fit(longest_label: int) -> int:
    """How many size ticks a panel holds without their labels touching: at most :data:`MAX_TICKS`, at least 2."""
    return max(2, min(MAX_TICKS, AXIS_CHARS // (longest_label + 2)))


def spread_ticks(v: list[float], log: bool, most: int = MAX_TICKS) -> list[float]:
    """At most ``most`` of the sorted sizes ``v``, spread evenly along the axis: on a log axis the measured size
    nearest each of evenly spaced log positions (every n-th of 500 sizes 1024 apart crowded the top of a log
    axis: "65,536 131,072 ..." ran into each other), on a linear one every n-th."""
    if not log:
        return v[:: int(np.ceil(len(v) / most))]
    logs = np.log(np.asarray(v, float))
    targets = np.linspace(logs[0], logs[-1], most)
    picked = {int(np.argmin(np.abs(logs - t))) for t in targets}
    return [v[i] for i in sorted(picked)]


def positive_finite(values: Iterable[Any]) -> np.ndarray:
    """The finite positive numbers among ``values`` (None and NaN left out), in order: at once for a sequence
    of numbers (a figure's 200,000 points were tested one by one, three times), one by one otherwise."""
    seq = values if isinstance(values, (np.ndarray, pd.Series, list, tuple)) else list(values)
    try:
        v = np.asarray(seq, dtype=float)
    except (TypeError, ValueError):
        v = np.asarray([float(x) for x in seq if x is not None and np.isfinite(x) and x > 0], float)
    return v[np.isfinite(v) & (v > 0)] if v.ndim == 1 else v.ravel()[:0]


def set_size_axis(ax: Axes, xs: Iterable[float], axis: XAxis, companions: Mapping[str, Mapping] | None = None
                  ) -> None:
    """Ticks at the measured sizes, named, never offset: log₂ spacing for powers of two, log for other wide
    ranges; parameters moving in lockstep (``rows`` beside ``cols``) under each tick."""
    v = np.unique(positive_finite(xs)).tolist()
    ax.set_xlabel(axis.label + (" (" + ", ".join(f"{c} below" for c in (companions or {})) + ")"
                                if companions else ""))
    if not v:
        return
    pow2 = is_power_of_two(v)
    if len(v) > 1 and v[-1] / v[0] >= 4:
        ax.set_xscale("log", base=2 if pow2 else 10)
    most = ticks_that_fit(max(len(line) for t in (v[0], v[-1]) for line in tick_text(t, pow2).split("\n")))
    ticks = v if len(v) <= most else spread_ticks(v, ax.get_xscale() == "log", most)
    labels = []
    for t in ticks:
        text = tick_text(t, pow2)
        for c, m in (companions or {}).items():
            if t in m:
                text += f"\n{c}={m[t]}"
        labels.append(text)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos, d=dict(zip(ticks, labels, strict=True)):
                                               d.get(x, "")))
    ax.xaxis.set_minor_locator(NullLocator())
    if len(v) == 1:
        ax.set_xlim(v[0] / 2, v[0] * 2) if ax.get_xscale() == "log" else ax.set_xlim(v[0] * 0.5, v[0] * 1.5)


def set_time_axis(ax: Axes, y: Iterable[float]) -> None:
    """Times in seconds, labelled each in its own unit ("20 µs", "1 ms"); log where they span > 20x."""
    v = positive_finite(y)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: fmt_tick_time(s)))
    if len(v) and v.max() / v.min() > 20:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if v.max() / v.min() < 1000 else (1.0,)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: fmt_tick_time(s)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.set_ylim(bottom=0)


def set_plain_axis(ax: Axes, y: Iterable[float], log_ratio: float | None = 20) -> None:
    """Plain numbers ("120", "0.5"), no "1e6" offset; log where the values span more than ``log_ratio``."""
    v = positive_finite(y)
    if log_ratio and len(v) and v.max() / v.min() > log_ratio:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: f"{s:,.4g}"))


# -- line plots against size ------------------------------------------------------------------

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
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        draw_metric(a, _for_kernel(ok, kernel), metric, bands, styles, run_names)
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
    data[metric] = pd.to_numeric(data[metric], errors="coerce")
    cols = series_columns(data)
    runs = _run_order(data)
    groups = list(dict.fromkeys(data["_group"]))
    pooled = "run_id" in cols and len(runs) > MAX_RUN_LINES
    if pooled:
        _draw_pooled_runs(ax, data, metric, [c for c in cols if c != "run_id"], styles, len(runs))
    n_noisy = 0
    for key, g in [] if pooled else data.groupby([*cols, "_group"], sort=True, dropna=False):
        g = g.dropna(subset=[metric]).sort_values("_x")
        if g.empty:
            continue
        style, ls = _line_style(key[:-1], cols, styles, runs)
        if len(groups) > 1 and len(runs) <= 1:
            ls = LINESTYLES[groups.index(key[-1]) % len(LINESTYLES)]
        label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
        ax.plot(g["_x"], g[metric], marker=style.marker, ms=4, color=style.color, ls=ls, label=label)
        band = quartile_band(g, metric) if bands else None
        if band is not None:
            ax.fill_between(g["_x"], band[0], band[1], color=style.color, alpha=0.15, linewidth=0)
        noisy = noisy_mask(g)
        if noisy.any():
            _mark_noisy(ax, g["_x"][noisy], g[metric][noisy], style.color)
            n_noisy += int(noisy.sum())
    _noisy_legend(ax, n_noisy)
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


#: A series timed in more runs than this is drawn as one line (the median over its runs at each size) with a
#: band from the fastest run to the slowest: a line per run made 400 lines and 6 MB of SVG per figure for a
#: report of 100 runs, which no reader can tell apart.
MAX_RUN_LINES = 6


def _draw_pooled_runs(ax: Axes, data: pd.DataFrame, metric: str, cols: list[str],
                      styles: Mapping[str, SeriesStyle] | None, n_runs: int) -> None:
    """One line per series (and splitting parameter): the median of ``metric`` over the runs at each size, and
    a band from its smallest to its largest value there."""
    pooled = (data.dropna(subset=[metric]).groupby([*cols, "_group", "_x"], sort=True, dropna=False)[metric]
              .agg(["median", "min", "max"]).reset_index())
    groups = list(dict.fromkeys(pooled["_group"]))
    for key, g in pooled.groupby([*cols, "_group"], sort=True, dropna=False):
        style, _ = _line_style(key[:-1], cols, styles, [])
        ls = LINESTYLES[groups.index(key[-1]) % len(LINESTYLES)] if len(groups) > 1 else "-"
        label = series_label(key[:-1], cols, None, styles) + (f", {key[-1]}" if key[-1] else "")
        ax.plot(g["_x"], g["median"], marker=style.marker, ms=3, color=style.color, ls=ls, label=label)
        ax.fill_between(g["_x"], g["min"], g["max"], color=style.color, alpha=0.15, linewidth=0)
    ax.plot([], [], ls="none", label=f"median of {n_runs} runs; band: their range")


def quartile_band(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Lower/upper edge of the interquartile band of ``metric`` (None when quartiles are unknown)."""
    if not {"q1_s", "q3_s", "median_s"} <= set(g.columns):
        return None
    q1, q3, med = (pd.to_numeric(g[c], errors="coerce").to_numpy(float) for c in ("q1_s", "q3_s", "median_s"))
    if np.isnan(q1).all() or np.isnan(q3).all():
        return None
    # The line is the median of the rounds' medians; the quartiles are of all samples pooled. Where rounds
    # drifted apart those two need not agree (the line ran outside its band), so the band is the samples'
    # spread around the line: the quartiles scaled by line / pooled median (no change for one round).
    scale = med / _pooled_medians(g, med)
    q1, q3 = q1 * scale, q3 * scale
    if metric == "median_s":
        return q1, q3
    if metric in INVERSE_TIME:
        v = g[metric].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return v * med / q3, v * med / q1
    return None


def _pooled_medians(g: pd.DataFrame, fallback: np.ndarray) -> np.ndarray:
    """Median of each row's pooled samples (``samples_s``), or ``fallback`` where they are not stored."""
    if "samples_s" not in g:
        return fallback
    out = fallback.copy()
    for i, text in enumerate(g["samples_s"]):
        try:
            samples = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            samples = None
        if samples:
            pooled = float(np.median(np.asarray(samples, dtype=float)))
            if pooled > 0:
                out[i] = pooled
    return out


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
    kernel = kernel or _kernels(df)[0]
    k = _for_kernel(df, kernel)
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


# -- speed-up ---------------------------------------------------------------------------------

def plot_speedup(df: pd.DataFrame, baseline: Any = None, *, ax: Axes | None = None, title: str | None = None,
                 table: pd.DataFrame | None = None, styles: Mapping[str, SeriesStyle] | None = None,
                 run_names: Mapping[str, str] | None = None) -> Figure:
    """Speed-up of each variant over a baseline against size; error bars are 95% intervals from the rounds.

    ``baseline`` defaults to each kernel's library variant (see
    :func:`workbench.judge.compare.speedup_vs_baseline`); ``table`` takes an
    already computed speed-up table.
    """
    ok, bad = split_ok(df)
    styles = styles if styles is not None else styles_for(df)
    if table is None:
        variant, backend = parse_baseline(baseline)
        table = speedup_vs_baseline(ok, baseline_variant=variant, baseline_backend=backend) if len(ok) else None
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        t = table if table is None else _for_kernel(table, kernel)
        _draw_speedup(a, t, styles, run_names)
        a.set_title(title or (f"{kernel}: speed-up" if kernel else "speed-up"))
    return finish(fig, bad, layout=ax is None)


def _draw_speedup(ax: Axes, t: pd.DataFrame | None, styles: Mapping[str, SeriesStyle] | None = None,
                  run_names: Mapping[str, str] | None = None) -> None:
    ax.set_ylabel(METRIC_LABELS["speedup"])
    ax.axhline(1.0, color="#555", lw=1, ls="--")
    if t is None or t.empty or t["speedup"].isna().all():
        ax.set_xlabel("size")
        ax.text(0.5, 0.5, "no baseline to compare with", ha="center", va="center", transform=ax.transAxes)
        return
    t = t[~((t["variant"] == t["baseline_variant"]) & (t["backend"] == t["baseline_backend"]))]
    t = t.dropna(subset=["speedup"])
    data, axis = with_x(t)
    cols = series_columns(data)
    runs = _run_order(data)
    for key, g in data.groupby([*cols, "_group"], sort=True, dropna=False):
        g = g.sort_values("_x")
        style, ls = _line_style(key[:-1], cols, styles, runs)
        s = g["speedup"].to_numpy(float)
        lo = np.nan_to_num(s - g["ci_low"].to_numpy(float), nan=0.0).clip(min=0)
        hi = np.nan_to_num(g["ci_high"].to_numpy(float) - s, nan=0.0).clip(min=0)
        base = display_name(series_key(g["baseline_variant"].iloc[0], g["baseline_backend"].iloc[0]), styles)
        label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
        ax.errorbar(g["_x"], s, yerr=[lo, hi], marker=style.marker, ms=4, capsize=3, color=style.color, ls=ls,
                    label=f"{label} vs {base}")
    set_size_axis(ax, data["_x"], axis, data.attrs.get("companions"))
    ratios = np.append(t["speedup"].to_numpy(float), 1.0)
    if ratios.min() > 0 and ratios.max() / ratios.min() > 4:  # ratios read best on a log scale
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if ratios.max() / ratios.min() < 300
                                              else (1.0,)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: f"{s:.3g}×"))
    ax.grid(True, alpha=0.3)



# -- roofline ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class DrawnRoof:
    """One roof line of a roofline: the backends whose rows it bounds and their roof set."""

    label: str
    bandwidth: float | None
    flops: float | None
    source: str
    published: bool
    #: Measured cache-level bandwidths, innermost first: (level, GB/s), drawn as the cache-aware roofline's
    #: thinner slopes above the DRAM one.
    caches: tuple[tuple[str, float], ...] = ()


def _short_source(src: str) -> str:
    return {MEASURED: "measured", AUTO_PROBE: "probed", PUBLISHED: "published", "": "measured"}.get(src, src)


def roof_lines(roofs: Mapping[RoofKey, RoofSet], dtype: str | None) -> dict[RoofKey, DrawnRoof]:
    """The roof line each (environment, backend) is drawn under: DRAM bandwidth and the peak FLOP/s of
    ``dtype``; backends sharing one device and identical roofs share one line (every CPU runtime)."""
    groups: dict[tuple[Any, ...], list[RoofKey]] = {}
    for key, rs in roofs.items():
        bw, fl = rs.get(RoofKind.DRAM), rs.get(RoofKind.FLOPS, dtype)
        bw = bw if bw is not None and bw.known else None
        fl = fl if fl is not None and fl.known else None
        if bw is None and fl is None:
            continue
        src = _short_source((bw or fl).source)  # type: ignore[union-attr]
        caches = tuple((k.short, rs.value(k)) for k in CACHE_LEVELS if rs.value(k))
        ident = (rs.device, bw.value if bw else None, fl.value if fl else None, src, caches)
        groups.setdefault(ident, []).append(key)
    out = {}
    for (device, bw, fl, src, caches), keys in groups.items():
        backends = list(dict.fromkeys(k[1] for k in keys))
        who = backends[0] if len(backends) == 1 else f"{device} ({len(backends)} runtimes)"
        line = DrawnRoof(f"{who} roof ({src})", bw, fl, src, src == "published", caches)  # type: ignore[arg-type]
        out.update({k: line for k in keys})
    return out


def _above_reason(r: Any, line: DrawnRoof, roofs: RoofSet | None, llc: float | None) -> str:
    """Why a point sits above its roof, in a few words (points with the same reason are counted together):
    implausible above the device's top roof; else the measured cache level holding its working set, or no
    explanation at all where no cache ceiling was measured."""
    implausible = above_top_roof(r, roofs)
    if implausible:
        return implausible.partition(":")[0] + " (above the device's top roof: L1 bandwidth or peak FLOP/s)"
    kind = {"probed": AUTO_PROBE, "published": PUBLISHED}.get(line.source, MEASURED)
    gbps, gflops, nbytes = (float(r.get(c) or 0) for c in ("gbps", "gflops", "bytes"))
    reasons = []
    if line.bandwidth and gbps > line.bandwidth:
        level = roofs.cache_level_for(nbytes) if roofs is not None else None
        if level is not None and level.known:
            within = "within" if gbps <= level.value else "above"  # type: ignore[operator]
            reasons.append(f"working set fits in the {level.kind.cache}, {within} its measured "
                           f"{level.value:.3g} GB/s ceiling")
        elif nbytes and llc:
            fits = f"≤ {fmt_bytes(llc)} fits in the last-level cache" if nbytes <= llc else \
                f"exceeds the {fmt_bytes(llc)} last-level cache"
            reasons.append(f"working set {fits}, but no cache bandwidth was measured, so nothing explains the "
                           f"{line.source} {line.bandwidth:.3g} GB/s slope being passed: "
                           f"{ceiling_suspect(kind, 'bandwidth')}")
        else:
            reasons.append(f"above the {line.source} {line.bandwidth:.3g} GB/s slope: "
                           f"{ceiling_suspect(kind, 'bandwidth')}")
    if line.flops and gflops > line.flops:
        reasons.append(f"above the {line.source} {line.flops:.3g} GFLOP/s roof: {ceiling_suspect(kind, 'GEMM')}")
    return "; ".join(reasons) or "above the roof"


def _wrap(text: str, width: int = 120) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="    ", break_long_words=True) or [text]


def _chars_across(width_in: float, font_pt: float = 7.0) -> int:
    """Characters of ``font_pt`` text that fit across ``width_in`` inches, with a margin (DejaVu Sans averages
    ~0.6 em a character; wider glyphs and the left offset take the rest)."""
    return max(40, int((width_in - 0.3) * 72 / (font_pt * 0.62)))


def _first_clause(message: object, limit: int = 110) -> str:
    """A failure message short enough for a footnote, cut at a clause or word boundary (never mid-word)."""
    text = " ".join(str(message or "").split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in (": ", "; ", ", "):
        cut = head.rfind(sep)
        if cut > limit // 2:
            return head[:cut] + " …"
    return head.rsplit(" ", 1)[0] + " …"


def _roofline_points(ok: pd.DataFrame) -> pd.DataFrame:
    if ok.empty or not {"intensity", "gflops"} <= set(ok.columns):
        return ok.iloc[0:0]
    inten, gfl = (pd.to_numeric(ok[c], errors="coerce") for c in ("intensity", "gflops"))
    return ok[(inten > 0) & (gfl > 0)]


def plot_roofline(df: pd.DataFrame, peaks: pd.DataFrame | None = None, *, ax: Axes | None = None,
                  title: str | None = None, published: bool = True,
                  environments: Mapping[str, Any] | None = None, styles: Mapping[str, SeriesStyle] | None = None,
                  run_names: Mapping[str, str] | None = None) -> Figure:
    """Points at (FLOP/byte, GFLOP/s) under their device's DRAM bandwidth slope and compute roof.

    The roofs are :func:`workbench.roofs.model.resolve_roofs`'s (stored probe, the rows' own, published); every
    runtime on one device with the same roofs shares one line. Points above their roof are ringed and the
    reason is written under the axes: implausible above the device's top roof, else the measured cache level
    holding the working set, or no explanation where no cache ceiling was measured; noisy cells are hollow.
    With no roof at all the points are still drawn, and a note says so.
    """
    ok, bad = split_ok(df)
    styles = styles if styles is not None else styles_for(df)
    ok = _roofline_points(ok)
    roofs = resolve_roofs(ok, peaks, published=published)
    dtypes = list(dict.fromkeys(ok["dtype"].astype(str))) if len(ok) and "dtype" in ok else [None]
    lines = {(key, dt): line for dt in dtypes for key, line in roof_lines(roofs, dt).items()}
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(1, width=5.6, height=3.6)
    a = axes[0]
    xs = ok["intensity"].to_numpy(float) if len(ok) else np.array([0.1, 10.0])
    # at least two decades either way, so the ridge point and a narrow cloud of points both show
    x = np.logspace(np.log10(max(xs.min() / 10, 1e-4)), np.log10(xs.max() * 10), 100)
    _draw_roofline_axes(a, title)
    for i, (line, dt) in enumerate(dict.fromkeys((ln, dt) for (_, dt), ln in lines.items())):
        label = line.label if len(dtypes) < 2 else f"{line.label} {dt}"
        color = ROOF_COLORS[i % len(ROOF_COLORS)]
        _draw_roof(a, x, line.bandwidth, line.flops, label, ":" if line.published else "-", color)
        for level, gbps in line.caches:
            _draw_roof(a, x, gbps, line.flops, f"{level} {gbps:.3g} GB/s", "--", color, lw=0.8)
    notes: list[str] = []
    if len(ok):
        _draw_points(a, ok, styles, run_names)
        above: dict[str, list[str]] = {}
        ring_x, ring_y = [], []
        for _, r in ok.iterrows():
            key = (str(r.get("env_id") or "") if pd.notna(r.get("env_id")) else "", str(r["backend"]))
            line = lines.get((key, str(r.get("dtype"))) if "dtype" in ok else (key, None))
            if line is None:
                continue
            inten, gflops = float(r["intensity"]), float(r["gflops"])
            roof = min(line.bandwidth * inten if line.bandwidth else np.inf, line.flops or np.inf)
            if np.isfinite(roof) and gflops > roof * 1.001:
                ring_x.append(inten)
                ring_y.append(gflops)
                reason = _above_reason(r, line, roofs.get(key), llc_of(dict(environments or {}), r))
                above.setdefault(reason, []).append(f"{r.get('variant')} @ {r.get('backend')} "
                                                    f"{r.get('size_label') or ''}".strip())
        if ring_x:
            a.scatter(ring_x, ring_y, s=90, facecolors="none", edgecolors="#d95f02", linewidths=1.4, zorder=5,
                      label=f"above its roof ({len(ring_x)}): see below")
            for reason, who in above.items():
                example = ", ".join(who[:2]) + (f" and {len(who) - 2} more" if len(who) > 2 else "")
                notes.append(f"above the roof, {len(who)} point{'s' if len(who) > 1 else ''} ({example}): {reason}")
        tops = [ln.get_ydata().max() for ln in a.lines if len(ln.get_ydata())] + [ok["gflops"].max()]
        hi = max(tops) * 3
        a.set_ylim(min(ok["gflops"].min() / 10, hi / 1000), hi)
        a.set_xlim(x[0], x[-1])
        if not lines:
            a.text(0.02, 0.98, "no ceiling known (nothing measured, probed or published for these devices):\n"
                   "points drawn without a roof; `workbench peaks` measures one", ha="left", va="top", fontsize=7,
                   transform=a.transAxes, color="#777")
    else:
        a.text(0.5, 0.5, "no ok rows with intensity and GFLOP/s", ha="center", va="center", transform=a.transAxes)
    return finish(fig, bad, layout=ax is None, notes=notes[:MAX_LISTED])


def _draw_roofline_axes(a: Axes, title: str | None) -> None:
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("arithmetic intensity (FLOP/byte)")
    a.set_ylabel("GFLOP/s")
    a.set_title(title or "roofline")
    a.grid(True, alpha=0.3)
    a.xaxis.set_major_formatter(FuncFormatter(lambda v, pos: f"{v:g}"))
    a.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: f"{v:g}"))


def _draw_points(a: Axes, ok: pd.DataFrame, styles: Mapping[str, SeriesStyle],
                 run_names: Mapping[str, str] | None) -> None:
    cols = series_columns(ok)
    runs = _run_order(ok)
    n_noisy = 0
    for key, g in ok.groupby(cols, sort=True, dropna=False):
        style, _ = _line_style(key, cols, styles, runs)
        a.scatter(g["intensity"], g["gflops"], s=22, marker=style.marker, color=style.color,
                  label=series_label(key, cols, run_names, styles), zorder=3)
        noisy = noisy_mask(g)
        if noisy.any():
            _mark_noisy(a, g["intensity"][noisy], g["gflops"][noisy], style.color, size=6)
            n_noisy += int(noisy.sum())
    _noisy_legend(a, n_noisy)


def has_roof(df: pd.DataFrame, peaks: pd.DataFrame | None = None, published: bool = True) -> bool:
    """Whether a roofline of these rows would have points and at least one roof line: without either it
    says nothing."""
    ok = _roofline_points(split_ok(df)[0])
    if ok.empty:
        return False
    roofs = resolve_roofs(ok, peaks, published=published)
    dtypes = list(dict.fromkeys(ok["dtype"].astype(str))) if "dtype" in ok else [None]
    return any(roof_lines(roofs, dt) for dt in dtypes)


def _draw_roof(ax: Axes, x: np.ndarray, bw: float | None, flops: float | None, label: str, ls: str,
               color: str, lw: float = 1.5) -> None:
    bw = bw if bw is not None and np.isfinite(bw) and bw > 0 else None
    flops = flops if flops is not None and np.isfinite(flops) and flops > 0 else None
    if bw and flops:
        y = np.minimum(bw * x, flops)
    elif bw:
        y = bw * x
    elif flops:
        y = np.full_like(x, flops)
    else:
        return
    ax.plot(x, y, ls=ls, lw=lw, color=color, label=label)


# -- memory -----------------------------------------------------------------------------------

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
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        k = _for_kernel(ok, kernel)
        k = k.dropna(subset=["peak_mem_bytes"]) if "peak_mem_bytes" in k else k.iloc[0:0]
        a.set_ylabel(METRIC_LABELS["peak_mem_bytes"])
        a.set_title(title or (f"{kernel}: peak memory" if kernel else "peak memory"))
        if k.empty:
            a.set_xlabel("size")
            a.text(0.5, 0.5, "no memory measurements", ha="center", va="center", transform=a.transAxes)
            continue
        data, axis = with_x(k)
        data["peak_mem_bytes"] = pd.to_numeric(data["peak_mem_bytes"], errors="coerce")
        unit, scale = _bytes_unit(data["peak_mem_bytes"])
        a.set_ylabel(f"{METRIC_LABELS['peak_mem_bytes']} ({unit})")
        cols = series_columns(data)
        runs = _run_order(data)
        for key, g in data.groupby([*cols, "_group"], sort=True, dropna=False):
            g = g.sort_values("_x")
            style, ls = _line_style(key[:-1], cols, styles, runs)
            methods = sorted({_short_method(str(m)) for m in g.get("mem_method", pd.Series(dtype=str)).dropna() if m})
            label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
            a.plot(g["_x"], g["peak_mem_bytes"] / scale, marker=style.marker, ms=4, color=style.color, ls=ls,
                   label=label + (f" [{', '.join(methods)}]" if methods else ""))
        set_size_axis(a, data["_x"], axis, data.attrs.get("companions"))
        set_plain_axis(a, data["peak_mem_bytes"] / scale)
        a.grid(True, alpha=0.3)
    return finish(fig, bad, layout=ax is None)

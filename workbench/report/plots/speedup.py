"""Speed-up of each variant over a baseline against size, with the verdicts' intervals (their coverage, 97.5%)
as error bars."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.verdict_labels import verdict_labels
from workbench.report.plots.frame import finish, new_figure, split_ok
from workbench.report.plots.metrics import METRIC_LABELS
from workbench.report.plots.series import for_kernel, kernel_names, line_style, run_order, series_columns, series_label
from workbench.report.plots.size_axis import set_size_axis, with_x
from workbench.report.styles import SeriesStyle, display_name, parse_baseline, series_key, styles_for

#: Legend entry of the hollow rings over points whose verdict names no direction.
UNSETTLED_LABEL = "hollow: no settled direction"
#: Up to this many points, each is labelled with its verdict; beyond it the hollow rings alone say it.
MAX_VERDICT_LABELS = 16
#: Verdicts that name a direction: drawn filled; every other one gets a hollow ring.
SETTLED = ("faster", "slower")


def _mark_verdicts(ax: Axes, g: pd.DataFrame, color: Any, label_points: bool) -> int:
    """The verdict at each point of one series: a hollow ring where it names no direction (same, inconclusive,
    disturbed, could not tell), and, where few points are drawn, the verdict in words (each with its basis, as
    :func:`~workbench.judge.verdict_labels.verdict_labels` reads it); returns the rings drawn."""
    if "verdict" not in g:
        return 0
    words = verdict_labels(g)   # each with its basis: too few rounds at speed reads so, not "disturbed"
    open_ = np.array([str(v) not in SETTLED for v in g["verdict"]], dtype=bool)
    if open_.any():
        ax.plot(g["_x"][open_], g["speedup"][open_], ls="none", marker="o", ms=7, mfc="white", mec=color, mew=1.3,
                zorder=4)
    if label_points:
        for x, y, text in zip(g["_x"], g["speedup"], words, strict=True):
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 5), fontsize=7, color=color)
    return int(open_.sum())


def plot_speedup(df: pd.DataFrame, baseline: Any = None, *, ax: Axes | None = None, title: str | None = None,
                 table: pd.DataFrame | None = None, styles: Mapping[str, SeriesStyle] | None = None,
                 run_names: Mapping[str, str] | None = None) -> Figure:
    """Speed-up of each variant over a baseline against size; error bars are the verdicts' intervals (97.5%).

    ``baseline`` defaults to each kernel's library variant (see
    :func:`workbench.judge.compare.speedup_vs_baseline`); ``table`` takes an
    already computed speed-up table.
    """
    ok, bad = split_ok(df)
    styles = styles if styles is not None else styles_for(df)
    if table is None:
        variant, backend = parse_baseline(baseline)
        table = speedup_vs_baseline(ok, baseline_variant=variant, baseline_backend=backend) if len(ok) else None
    kernels = kernel_names(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        t = table if table is None else for_kernel(table, kernel)
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
    runs = run_order(data)
    unsettled = 0
    for key, g in data.groupby([*cols, "_group"], sort=True, dropna=False):
        g = g.sort_values("_x")
        style, ls = line_style(key[:-1], cols, styles, runs)
        s = g["speedup"].to_numpy(float)
        lo = np.nan_to_num(s - g["ci_low"].to_numpy(float), nan=0.0).clip(min=0)
        hi = np.nan_to_num(g["ci_high"].to_numpy(float) - s, nan=0.0).clip(min=0)
        base = display_name(series_key(g["baseline_variant"].iloc[0], g["baseline_backend"].iloc[0]), styles)
        label = series_label(key[:-1], cols, run_names, styles) + (f", {key[-1]}" if key[-1] else "")
        ax.errorbar(g["_x"], s, yerr=[lo, hi], marker=style.marker, ms=4, capsize=3, color=style.color, ls=ls,
                    label=f"{label} vs {base}")
        unsettled += _mark_verdicts(ax, g, style.color, label_points=len(t) <= MAX_VERDICT_LABELS)
    if unsettled:
        ax.plot([], [], ls="none", marker="o", ms=6, mfc="white", mec="#555", mew=1.3,
                label=f"{UNSETTLED_LABEL} ({unsettled})")
    set_size_axis(ax, data["_x"], axis, data.attrs.get("companions"))
    ratios = np.append(t["speedup"].to_numpy(float), 1.0)
    if ratios.min() > 0 and ratios.max() / ratios.min() > 4:  # ratios read best on a log scale
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if ratios.max() / ratios.min() < 300
                                              else (1.0,)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: f"{s:.3g}×"))
    ax.grid(True, alpha=0.3)

"""The small figure of one series on its timeline: runs along x, each run's median with its interval, the
level of each stretch between changes, and every change marked with its step."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.core.units import time_unit_for

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.history.timeline import SeriesHistory

#: z of the interval drawn around each run's median (95%).
_Z = 1.96


def plot_series_history(h: SeriesHistory, width: float = 4.6, height: float = 1.9) -> Figure:
    """The figure of one series (no pyplot: nothing is shown or kept)."""
    from matplotlib.figure import Figure

    pts = h.series.points
    unit, scale = time_unit_for(sorted(p.median_s for p in pts)[len(pts) // 2])
    xs = list(range(1, len(pts) + 1))
    ys = [p.median_s / scale for p in pts]
    lo = [y - y * math.exp(-_Z * p.sigma) for y, p in zip(ys, pts, strict=True)]
    hi = [y * math.exp(_Z * p.sigma) - y for y, p in zip(ys, pts, strict=True)]
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", ms=3, lw=0.8, color="#33608f", ecolor="#9fb6cf", capsize=0)
    bounds = [0, *(c.index for c in h.changes), len(pts)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        level = math.exp(sum(math.log(p.median_s) for p in pts[a:b]) / max(b - a, 1)) / scale
        ax.hlines(level, a + 0.6, b + 0.4, color="#555", lw=1.2)
    for c in h.changes:
        color = "#b8322a" if c.regression else "#2a8a3e"
        ax.axvline(c.index + 0.5, color=color, ls="--", lw=1)
        ax.annotate(f"{c.step:+.0%}", (c.index + 0.5, 1.0), xycoords=("data", "axes fraction"), color=color,
                    fontsize=8, ha="left", va="top", xytext=(3, -2), textcoords="offset points")
    for e in h.series.events():
        ax.axvline(e.index + 0.5, color="#c08a00", ls=":", lw=1)
    ax.set_xlabel("run", fontsize=8)
    ax.set_ylabel(f"median ({unit})", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_xlim(0.3, len(pts) + 0.7)
    ax.grid(axis="y", lw=0.3, alpha=0.5)
    return fig


def hover_marks(fig: Figure, h: SeriesHistory) -> str:
    """SVG circles over the points of ``fig`` (after it was saved as SVG, so its layout is final), each with
    a title naming the run, its time, tag and commit: what a reader sees on hover."""
    from workbench.core.units import fmt_time_auto

    ax = fig.axes[0]
    height_pt = fig.get_figheight() * 72
    _, scale = time_unit_for(sorted(p.median_s for p in h.series.points)[len(h.series.points) // 2])
    marks = []
    for i, p in enumerate(h.series.points, start=1):
        x, y = ax.transData.transform((i, p.median_s / scale))
        cx, cy = x * 72 / fig.dpi, height_pt - y * 72 / fig.dpi
        title = (f"run {i}: {p.run.run_id} ({p.run.created_at[:16].replace('T', ' ')}), "
                 f"{fmt_time_auto(p.median_s)} ±{p.sigma:.1%}; commit {p.run.commit or 'not recorded'}"
                 + (f"; tag {p.run.tag}" if p.run.tag else ""))
        marks.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="transparent" pointer-events="all">'
                     f"<title>{_escape(title)}</title></circle>")
    return '<g class="history-hover">' + "".join(marks) + "</g>"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")

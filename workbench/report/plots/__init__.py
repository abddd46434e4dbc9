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

One module per figure family (:mod:`.lines`, :mod:`.speedup`, :mod:`.roofline`, :mod:`.memory`) over the
parts they share: the frame (:mod:`.frame`: legend, margins, rows left out), the series (:mod:`.series`),
the axes (:mod:`.size_axis`) and the metric names (:mod:`.metrics`). This package is their public face.
"""

from __future__ import annotations

from workbench.report.plots.frame import _first_clause as _first_clause
from workbench.report.plots.lines import (
    MAX_RUN_LINES,
    plot_kernel,
    plot_metric,
    plot_throughput,
    plot_time,
    quartile_band,
)
from workbench.report.plots.memory import memories_differ, plot_memory
from workbench.report.plots.roofline import has_roof, plot_roofline
from workbench.report.plots.series import noisy_mask
from workbench.report.plots.size_axis import MAX_TICKS, spread_ticks
from workbench.report.plots.speedup import plot_speedup
from workbench.report.styles import SeriesStyle, series_key, series_style, style_map, styles_for

__all__ = ["MAX_RUN_LINES", "MAX_TICKS", "SeriesStyle", "has_roof", "memories_differ", "noisy_mask", "plot_kernel",
           "plot_memory", "plot_metric", "plot_roofline", "plot_speedup", "plot_throughput", "plot_time",
           "quartile_band", "series_key", "series_style", "spread_ticks", "style_map", "styles_for"]

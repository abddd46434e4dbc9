"""The dashboard's history view: the selected kernel's series on their timelines, from every run in the
store (the same figures and changes as the report's History section and ``workbench history``)."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

import ipywidgets as w

log = logging.getLogger(__name__)

#: Figures the view shows at most (series with changes first).
MAX_VIEW_FIGURES = 6
#: Runs a series needs before it is drawn.
MIN_VIEW_RUNS = 2


class HistoryView:
    """The selected kernel's history: a line per machine and change, then a figure per series."""

    def __init__(self) -> None:
        self.widget = w.HTML('<i style="color:#999">no history yet</i>').add_class("wb-history")
        self.kernel: str | None = None

    def update(self, store: Any, kernel: str | None) -> None:
        """Read the store's series of ``kernel`` and draw them; never raises (a problem is shown as text)."""
        self.kernel = kernel
        if store is None or not kernel or (isinstance(store, (str, Path)) and not Path(store).exists()):
            self._text("no store yet: the history fills in after the first run")
            return
        try:
            self.widget.value = self._html(store, kernel)
        except Exception as exc:  # noqa: BLE001 - a view never takes the dashboard down
            log.warning("history view: %s", exc)
            self._text(f"no history: {type(exc).__name__}: {exc}")

    def _text(self, text: str) -> None:
        self.widget.value = f'<i style="color:#999">{html.escape(text)}</i>'

    def _html(self, store: Any, kernel: str) -> str:
        from workbench.history.series import SeriesFilter
        from workbench.history.timeline import build_history
        from workbench.report.model import figure_svg
        from workbench.report.plots.history import hover_marks, plot_series_history
        from workbench.store.database import open_store

        st = open_store(store, must_exist=True) if not hasattr(store, "connection") else store
        history = build_history(st.connection, SeriesFilter(kernels=(kernel,)), min_runs=MIN_VIEW_RUNS)
        if not history.series:
            return f'<i style="color:#999">{html.escape(kernel)}: fewer than {MIN_VIEW_RUNS} runs of any cell ' \
                   "in the store yet; each run adds a point</i>"
        changed = [h for h in history.series if h.changes]
        head = (f"<p class='wb-history-head'>{html.escape(kernel)}: {len(history.series)} series on "
                f"{len(history.machines)} machine(s), {len(changed)} with a change of {history.threshold:.0%} or "
                "more</p>")
        items = []
        for i, h in enumerate(history.series[:MAX_VIEW_FIGURES]):
            fig = plot_series_history(h, width=4.4, height=1.8)
            svg = figure_svg(fig, f"wb-history-{i}").replace("</svg>", hover_marks(fig, h) + "</svg>", 1)
            notes = "".join(f"<br><span style='color:{'#b8322a' if c.regression else '#2a8a3e'}'>"
                            f"{'slower' if c.regression else 'faster'} {html.escape(c.text)}</span>"
                            for c in h.changes)
            items.append(f"<figure class='wb-history-fig' style='margin:4px 0;max-width:460px'>{svg}"
                         f"<figcaption style='font-size:12px'><b>{html.escape(h.series.label)}</b> "
                         f"<span style='color:#666'>{html.escape(h.series.machine.label)}; "
                         f"{len(h.series.points)} runs</span>{notes}</figcaption></figure>")
        more = len(history.series) - MAX_VIEW_FIGURES
        tail = f"<p style='color:#666'>{more} more series: <code>workbench history --kernel " \
               f"{html.escape(kernel)} --all</code></p>" if more > 0 else ""
        return head + "<div style='display:flex;flex-wrap:wrap;gap:8px'>" + "".join(items) + "</div>" + tail

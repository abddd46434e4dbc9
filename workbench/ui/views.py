"""What came out: the live plot with its metric toggle, the results table, the memory plot, exports.

Views receive a tidy DataFrame (one row per finished cell) and redraw
themselves. Figures are rendered to PNG and put into the Output widget's
outputs directly, which works from the sweep's background thread (a ``with
output:`` block would capture output by message parent and miss it) and shows
up as a plain ``<img>`` in JupyterLab and Voila alike.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

#: Toggle label -> metric name understood by :func:`workbench.report.plots.plot_metric`.
METRICS: list[tuple[str, str]] = [("time", "median_s"), ("GB/s", "gbps"), ("GFLOP/s", "gflops"),
                                  ("% peak", "pct_peak_bw"), ("speed-up", "speedup")]

EXPORT_FORMATS: list[tuple[str, str, str]] = [("HTML", "html", "html"), ("Markdown", "md", "md"),
                                              ("CSV", "csv", "csv"), ("JSON", "json", "json")]


def figure_output(fig: Any) -> dict[str, Any]:
    """A display_data output holding ``fig`` (a pyplot-free Figure) as PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return {"output_type": "display_data", "metadata": {},
            "data": {"image/png": base64.b64encode(buf.getvalue()).decode("ascii"),
                     "text/plain": "<Figure>"}}


def text_output(text: str) -> dict[str, Any]:
    return {"output_type": "display_data", "metadata": {}, "data": {"text/plain": text}}


class PlotView:
    """The metric toggle, the baseline for speed-ups, and the plot."""

    def __init__(self) -> None:
        self.metric = w.ToggleButtons(options=METRICS, value="median_s", tooltips=[
            "median time per call", "bytes moved / time", "floating-point operations / time",
            "% of the bandwidth ceiling: measured (workbench peaks or the automatic probe), "
            "else published", "speed-up vs the baseline"],
            style={"button_width": "auto"}).add_class("wb-metric")
        self.baseline = w.Dropdown(options=[], description="Baseline",
                                   layout=w.Layout(width="280px")).add_class("wb-baseline")
        self.output = w.Output(layout=w.Layout(min_height="200px")).add_class("wb-plot")
        self.widget = w.VBox([w.HBox([self.metric, self.baseline]), self.output])
        self.df: pd.DataFrame | None = None

    def set_baselines(self, options: list[str], preferred: str | None = None) -> None:
        current = self.baseline.value
        self.baseline.options = options
        if current in options:
            self.baseline.value = current
        elif options:
            self.baseline.value = preferred if preferred in options else options[0]

    def update(self, df: pd.DataFrame) -> None:
        self.df = df
        if df.empty:
            self.output.outputs = (text_output("no finished cell yet"),)
            return
        metric = self.metric.value
        baseline = self.baseline.value if metric == "speedup" else None
        # Failed cells go in too: the plot lists them under the axes instead of dropping them silently.
        from ..report.plots import plot_metric

        fig = plot_metric(df, metric, baseline=baseline)
        self.output.outputs = (figure_output(fig),)

    def redraw(self) -> None:
        if self.df is not None:
            self.update(self.df)


_TABLE_STYLE = ("<style>.wb-results td, .wb-results th {white-space: nowrap; padding: 2px 8px}"
                ".wb-results tbody tr:nth-child(odd) {background: rgba(0,0,0,0.03)}"
                ".wb-results tr.wb-noisy td {background: #fbf7ea}"
                ".wb-results .wb-mark-noisy {color: #8a6d00; font-weight: 700}"
                ".wb-results .wb-mark-peak {color: #b35900; font-weight: 700}"
                ".wb-results td.wb-notes {white-space: normal; min-width: 260px; color: #555; font-size: 11px}"
                ".wb-flags {font-size: 12px; margin: 2px 0}</style>")


def results_html(df: pd.DataFrame) -> str:
    """The summary table as HTML: noisy rows tinted with a ``~`` badge, a % of peak above 100 with ``⚠``,
    each explained in a tooltip and in the notes column; a line under it counts the noisy cells."""
    from ..report.exporters import NOISY_MARK, PEAK_MARK, SUMMARY_COLUMNS, noise_summary, row_notes, summary_table

    notes = row_notes(df)
    table = summary_table(df)
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in SUMMARY_COLUMNS)
    body = []
    for (_, r), (_, n) in zip(table.iterrows(), notes.iterrows(), strict=True):
        cells = []
        for c in SUMMARY_COLUMNS:
            text = "" if r[c] is None or (isinstance(r[c], float) and pd.isna(r[c])) else str(r[c])
            if c == "median ± IQR" and n["noisy"] and text.startswith(NOISY_MARK):
                cells.append(f'<td title="noisy: {esc(n["noise_note"])}"><span class="wb-mark-noisy">{NOISY_MARK}'
                             f"</span>{esc(text[len(NOISY_MARK):])}</td>")
            elif c == "% peak" and n["peak_note"] and text.endswith(PEAK_MARK):
                cells.append(f'<td title="{esc(n["peak_note"])}">{esc(text[:-len(PEAK_MARK)])}'
                             f'<span class="wb-mark-peak">{PEAK_MARK}</span></td>')
            elif c == "notes":
                cells.append(f'<td class="wb-notes">{esc(text)}</td>')
            else:
                cells.append(f"<td>{esc(text)}</td>")
        cls = ' class="wb-noisy"' if n["noisy"] else ""
        body.append(f"<tr{cls}>{''.join(cells)}</tr>")
    line = noise_summary(df, notes)
    flags = f'<div class="wb-flags"><span class="wb-mark-noisy">{NOISY_MARK}</span> {esc(line)}</div>' if line else ""
    return (_TABLE_STYLE + flags + '<div style="max-height:360px;overflow:auto;font-size:12px">'
            f'<table class="wb-results"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


class TableView:
    """The tidy summary as an HTML table; failed cells show their status and message, noisy cells and
    % of peak above 100 are marked and explained."""

    def __init__(self) -> None:
        self.widget = w.HTML('<i style="color:#999">no results yet</i>').add_class("wb-table")

    def update(self, df: pd.DataFrame) -> None:
        self.widget.value = results_html(df)


class MemoryView:
    """Peak memory per cell, by the backend's own method."""

    def __init__(self) -> None:
        self.output = w.Output(layout=w.Layout(min_height="120px")).add_class("wb-memory")
        self.widget = self.output

    def update(self, df: pd.DataFrame) -> None:
        if df.empty:
            self.output.outputs = (text_output("no finished cell yet"),)
            return
        from ..report.plots import plot_memory

        self.output.outputs = (figure_output(plot_memory(df)),)


class ExportPanel:
    """Buttons writing the current run as HTML / Markdown / CSV / JSON under a chosen folder."""

    def __init__(self, write: Callable[[str, Path], Path], folder: str = "reports") -> None:
        self._write = write
        self.folder = w.Text(value=folder, description="Folder",
                             layout=w.Layout(width="360px")).add_class("wb-export-dir")
        self.buttons: dict[str, w.Button] = {}
        for label, fmt, css in EXPORT_FORMATS:
            b = w.Button(description=label, icon="download", disabled=True, tooltip=f"write the run as {label}",
                         layout=w.Layout(width="120px")).add_class(f"wb-export-{css}")
            self.buttons[fmt] = b
        self.written = w.HTML().add_class("wb-export-path")
        self.last_path: Path | None = None
        self.widget = w.VBox([w.HBox([self.folder, *self.buttons.values()]), self.written])

    def enable(self, on: bool) -> None:
        for b in self.buttons.values():
            b.disabled = not on

    def export(self, fmt: str) -> Path:
        path = self._write(fmt, Path(self.folder.value or "reports").expanduser())
        self.last_path = Path(path).resolve()
        self.written.value = f"wrote <code>{html.escape(str(self.last_path))}</code>"
        return self.last_path

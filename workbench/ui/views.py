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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import pandas as pd

from workbench.core.record import JsonObject
from workbench.core.status import Status
from workbench.report.row_notes import row_notes
from workbench.report.summary import NOISY_MARK, PEAK_MARK, SUMMARY_COLUMNS, noise_summary, summary_table

if TYPE_CHECKING:
    from workbench.report.styles import SeriesStyle

#: Toggle label -> metric name understood by :func:`workbench.report.plots.plot_metric`; "pct_peak" is the
#: % of each kernel's own ceiling: pct_peak_flops for compute-bound rows, pct_peak_bw for the others.
METRICS: list[tuple[str, str]] = [("time", "median_s"), ("GB/s", "gbps"), ("GFLOP/s", "gflops"),
                                  ("% peak", "pct_peak"), ("speed-up", "speedup")]
METRIC_TIPS: dict[str, str] = {
    "median_s": "median time per call", "gbps": "bytes moved / time", "gflops": "floating-point operations / time",
    "pct_peak": "% of the kernel's ceiling (bandwidth for memory-bound kernels, FLOP/s for compute-bound ones): "
                "measured (workbench peaks or the automatic probe), else published",
    "speedup": "speed-up vs the baseline"}

EXPORT_FORMATS: list[tuple[str, str, str]] = [("HTML", "html", "html"), ("Markdown", "md", "md"),
                                              ("CSV", "csv", "csv"), ("JSON", "json", "json")]

#: Figures are rendered at this many pixels per inch and shown at :data:`DISPLAY_PPI`: sharp at 2x.
RENDER_DPI = 200
DISPLAY_PPI = 100


def figure_output(fig: Any) -> JsonObject:
    """A display_data output holding ``fig`` (a pyplot-free Figure) as a hi-DPI PNG shown at half its pixels."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=RENDER_DPI)
    width = int(round(fig.get_figwidth() * DISPLAY_PPI))
    return {"output_type": "display_data", "metadata": {"image/png": {"width": width}},
            "data": {"image/png": base64.b64encode(buf.getvalue()).decode("ascii"),
                     "text/plain": "<Figure>"}}


def text_output(text: str) -> JsonObject:
    return {"output_type": "display_data", "metadata": {}, "data": {"text/plain": text}}


def _has_values(df: pd.DataFrame, column: str) -> bool:
    return column in df and pd.to_numeric(df[column], errors="coerce").notna().any()


def pct_peak_column(ok: pd.DataFrame) -> str | None:
    """The % of ceiling column these rows carry: pct_peak_flops where the rows are compute-bound,
    pct_peak_bw otherwise (the majority of rows decides when a table mixes both); None when neither
    has a value."""
    if ok is None or not len(ok):
        return None
    compute = ok["bound"].eq("compute-bound") if "bound" in ok else pd.Series(False, index=ok.index)
    wanted = "pct_peak_flops" if compute.sum() * 2 > len(ok) else "pct_peak_bw"
    other = "pct_peak_bw" if wanted == "pct_peak_flops" else "pct_peak_flops"
    for column in (wanted, other):
        if _has_values(ok, column):
            return column
    return None


def measured_series(df: pd.DataFrame) -> list[str]:
    """``variant @ backend`` of every series with at least one ok row, in the order first measured."""
    if df is None or not len(df) or "status" not in df:
        return []
    ok = df[df["status"] == Status.OK]
    from workbench.report.styles import series_key

    return list(dict.fromkeys(series_key(v, b) for v, b in zip(ok["variant"], ok["backend"], strict=True)))


class PlotView:
    """The metric toggle, the baseline for speed-ups (and exports), and the plot.

    The toggle offers only what the rows can show: GB/s, GFLOP/s and % peak appear once some row has the
    value, speed-up once two series were measured; the baseline list holds measured series only.
    """

    def __init__(self) -> None:
        self.metric = w.ToggleButtons(options=METRICS, value="median_s", tooltips=[METRIC_TIPS[m] for _, m in METRICS],
                                      style={"button_width": "auto"}).add_class("wb-metric")
        self.baseline = w.Dropdown(options=[], description="Baseline", disabled=True,
                                   tooltip="the reference for speed-ups, here and in the exported reports",
                                   layout=w.Layout(width="300px")).add_class("wb-baseline")
        self.output = w.Output(layout=w.Layout(min_height="200px")).add_class("wb-plot")
        self.widget = w.VBox([w.HBox([self.metric, self.baseline], layout=w.Layout(flex_flow="row wrap")),
                              self.output])
        self.df: pd.DataFrame | None = None
        self.styles: Mapping[str, SeriesStyle] | None = None
        self.run_names: dict[str, str] | None = None
        self._quiet = False  # set while the options change, so the toggle's own events draw nothing
        self._chosen: str | None = None  # the baseline the user picked (None: the preferred one)
        #: Series the running sweep will measure (0: no run): with two or more, speed-up stays offered from the
        #: first cell on, instead of appearing and vanishing as the first series finish (issue 39).
        self.expected_series = 0
        self.baseline.observe(self._picked, names="value")

    def _picked(self, change: Any) -> None:
        if not self._quiet:
            self._chosen = change["new"]

    def set_baselines(self, options: list[str], preferred: str | None = None) -> None:
        """Offer ``options`` (measured series); keep the user's pick while it is offered, else ``preferred``."""
        current = self._chosen
        self._quiet = True
        try:
            self.baseline.options = options
            if current in options:
                self.baseline.value = current
            elif options:
                self.baseline.value = preferred if preferred in options else options[0]
            else:
                self.baseline.value = None
        finally:
            self._quiet = False
        self.baseline.disabled = not options

    def available_metrics(self, df: pd.DataFrame) -> list[tuple[str, str]]:
        """The toggle's options that ``df`` can draw (every one before the first row)."""
        if df is None or df.empty or "status" not in df:
            return list(METRICS)
        ok = df[df["status"] == Status.OK]
        out = []
        for label, metric in METRICS:
            if metric in ("gbps", "gflops") and not _has_values(ok, metric):
                continue
            if metric == "pct_peak" and pct_peak_column(ok) is None:
                continue
            if metric == "speedup" and len(measured_series(df)) < 2 and self.expected_series < 2:
                continue
            out.append((label, metric))
        return out

    def _set_metrics(self, df: pd.DataFrame) -> None:
        options = self.available_metrics(df)
        if tuple(options) == tuple(self.metric.options):
            return
        current = self.metric.value
        self._quiet = True
        try:
            self.metric.options = options
            self.metric.tooltips = [METRIC_TIPS[m] for _, m in options]
            values = [m for _, m in options]
            self.metric.value = current if current in values else values[0]
        finally:
            self._quiet = False

    def clear(self, text: str = "no finished cell yet") -> None:
        self.df = None
        self.output.outputs = (text_output(text),)
        self._set_metrics(pd.DataFrame())
        self.set_baselines([])

    def update(self, df: pd.DataFrame, styles: Mapping[str, SeriesStyle] | None = None,
               run_names: dict[str, str] | None = None) -> None:
        self.df, self.styles, self.run_names = df, styles, run_names
        self._set_metrics(df)
        if df.empty:
            self.output.outputs = (text_output("no finished cell yet"),)
            return
        measured = len(measured_series(df))
        if self.metric.value == "speedup" and measured < 2:
            self.output.outputs = (text_output(f"speed-up: drawn once a second series has a result ({measured} of "
                                               f"{self.expected_series} so far)"),)
            return
        self.output.outputs = (figure_output(self.figure(df)),)

    def figure(self, df: pd.DataFrame) -> Any:
        from workbench.report.plots import plot_metric
        from workbench.report.plots.frame import split_ok

        metric = self.metric.value
        baseline = self.baseline.value if metric == "speedup" else None
        if metric == "pct_peak":
            metric = pct_peak_column(split_ok(df)[0]) or "median_s"
        # Failed cells go in too: the plot lists them under the axes instead of dropping them silently.
        return plot_metric(df, metric, baseline=baseline, styles=self.styles, run_names=self.run_names)

    def redraw(self) -> None:
        if self._quiet:
            return
        if self.df is not None:
            self.update(self.df, self.styles, self.run_names)


_TABLE_STYLE = ("<style>"
                # ipywidgets' HTML content is one nowrap line as wide as what it holds, 28 px a line: here it
                # takes the pane's width, so the table scrolls inside its own box (never clipped by the
                # pane, never over the export bar) and the noisy-cells line wraps.
                ".wb-table > .widget-html-content {min-width: 0; width: 100%; white-space: normal;"
                " line-height: 1.4}"
                ".wb-table-scroll {max-width: 100%; max-height: 360px; overflow: auto; font-size: 12px;"
                " margin-bottom: 6px}"
                ".wb-results td, .wb-results th {white-space: nowrap; padding: 2px 8px}"
                ".wb-results tbody tr:nth-child(odd) {background: rgba(0,0,0,0.03)}"
                ".wb-results tr.wb-noisy td {background: #fbf7ea}"
                ".wb-results .wb-mark-noisy {color: #8a6d00; font-weight: 700}"
                ".wb-results .wb-mark-peak {color: #b35900; font-weight: 700}"
                ".wb-results td.wb-notes {white-space: normal; min-width: 460px; color: #555; font-size: 11px}"
                ".wb-flags {font-size: 12px; margin: 2px 0; white-space: normal}</style>")


#: Columns said once above the table when every row has the same value (the dashboard runs one kernel).
FOLDED_COLUMNS = ("kernel", "backend", "dtype", "timer", "timing mode")


def _text(v: object) -> str:
    return "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v)


def shown_columns(table: pd.DataFrame) -> tuple[list[str], list[tuple[str, str]]]:
    """(columns the table shows, (column, value) pairs said once above it): a column with one value in every
    row is folded into that line, and one empty in every row is left out, so the time, rates and % of peak fit
    a laptop's results pane instead of scrolling out of sight behind "kernel saxpy" repeated on every line."""
    cols, folded = [], []
    for c in SUMMARY_COLUMNS:
        values = {_text(v) for v in table[c]} if len(table) else {""}
        if values == {""}:
            continue
        if c in FOLDED_COLUMNS and len(values) == 1:
            folded.append((c, values.pop()))
            continue
        cols.append(c)
    return cols, folded


def results_html(df: pd.DataFrame) -> str:
    """The summary table as HTML: noisy rows tinted with a ``~`` badge, a % of peak above 100 with ``⚠``,
    each explained in a tooltip and in the notes column; a line under it counts the noisy cells; what every
    row shares (kernel, backend, dtype, timer, timing mode) is said once above the table (:func:`shown_columns`)."""
    notes = row_notes(df)
    table = summary_table(df, notes=notes)
    esc = html.escape
    columns, folded = shown_columns(table)
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for (_, r), (_, n) in zip(table.iterrows(), notes.iterrows(), strict=True):
        cells = []
        for c in columns:
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
    if folded:
        flags += ('<div class="wb-flags wb-folded">every row: '
                  + " · ".join(f"{esc(c)} <b>{esc(v)}</b>" for c, v in folded) + "</div>")
    return (_TABLE_STYLE + flags + '<div class="wb-table-scroll">'
            f'<table class="wb-results"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


class TableView:
    """The tidy summary as an HTML table; failed cells show their status and message, noisy cells and
    % of peak above 100 are marked and explained."""

    def __init__(self) -> None:
        self.widget = w.HTML('<i style="color:#999">no results yet</i>').add_class("wb-table")

    def update(self, df: pd.DataFrame) -> None:
        self.widget.value = results_html(df)

    def clear(self, text: str = "no results yet") -> None:
        self.widget.value = f'<i style="color:#999">{html.escape(text)}</i>'


class MemoryView:
    """Peak memory per cell, by the backend's own method, in the same colours as the plot."""

    def __init__(self) -> None:
        self.output = w.Output(layout=w.Layout(min_height="120px")).add_class("wb-memory")
        self.widget = self.output

    def clear(self, text: str = "no finished cell yet") -> None:
        self.output.outputs = (text_output(text),)

    def update(self, df: pd.DataFrame, styles: Mapping[str, SeriesStyle] | None = None,
               run_names: dict[str, str] | None = None) -> None:
        if df.empty:
            self.clear()
            return
        from workbench.report.plots import plot_memory

        self.output.outputs = (figure_output(plot_memory(df, styles=styles, run_names=run_names)),)


class ExportPanel:
    """Buttons writing the current run as HTML / Markdown / CSV / JSON under a chosen folder."""

    def __init__(self, write: Callable[[str, Path], Path], folder: str = "reports") -> None:
        self._write = write
        self.folder = w.Text(value=folder, description="Folder",
                             layout=w.Layout(width="320px", max_width="100%")).add_class("wb-export-dir")
        self.buttons: dict[str, w.Button] = {}
        for label, fmt, css in EXPORT_FORMATS:
            b = w.Button(description=label, icon="download", disabled=True, tooltip=f"write the run as {label}",
                         layout=w.Layout(width="112px")).add_class(f"wb-export-{css}")
            self.buttons[fmt] = b
        self.written = w.HTML().add_class("wb-export-path")
        self.last_path: Path | None = None
        # The folder on one line, the buttons beside it where they fit and below it where they do not.
        self.widget = w.VBox([w.HBox([self.folder, *self.buttons.values()], layout=w.Layout(flex_flow="row wrap")),
                              self.written])

    def enable(self, on: bool) -> None:
        for b in self.buttons.values():
            b.disabled = not on

    def clear(self) -> None:
        """No run to export: buttons off, the last path forgotten."""
        self.enable(False)
        self.written.value = ""
        self.last_path = None

    def export(self, fmt: str) -> Path:
        path = self._write(fmt, Path(self.folder.value or "reports").expanduser())
        self.last_path = Path(path).resolve()
        self.written.value = f"wrote <code>{html.escape(str(self.last_path))}</code>"
        return self.last_path

"""The dashboard: controls on the left, progress, plots, table and exports on the right.

``Dashboard()`` in a notebook cell shows it (JupyterLab, Jupyter Notebook, Voila).
Everything that can fail — probing, building a sweep, plotting, exporting —
goes through :class:`StatusArea.guard`, so an error becomes a message and
a failed cell becomes a row whose status says what went wrong.
"""

from __future__ import annotations

import html
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

from workbench.backends.registry import all_backends, get_backend
from workbench.catalog import kernels, variants
from workbench.core.status import Status
from workbench.report.data import check_baseline, gather
from workbench.sweep.spec import SweepSpec, check_isolation  # where a sweep checks it: the UI imports no harness
from workbench.ui.controls import BackendPicker, KernelPicker, RunOptions, SizeControls
from workbench.ui.history_view import HistoryView
from workbench.ui.run_controller import RunController
from workbench.ui.status import StatusArea
from workbench.ui.views import ExportPanel, MemoryView, PlotView, TableView, measured_series


class Dashboard:
    """Pick backends, a kernel, its variants and sizes; run, watch, compare, export.

    What the right-hand side shows — progress, plot, table, memory, exports —
    always belongs to one run, named in the line above the plot: the run in
    progress, or the last one. Changing the kernel clears it (a run still in
    progress stays shown until it ends). Cells that cannot run (a variant on a
    backend of another runtime, a dtype the backend lacks) are stored by the
    sweep as ``unsupported`` but never counted, shown or exported here.
    """

    def __init__(self, store: Any = None, kernel: str | None = "saxpy", backends: list[str] | None = None,
                 export_dir: str = "reports", isolation: str | None = None) -> None:
        self.store = store
        #: Where cells run: "process" (default: a worker per backend; Cancel stops the running cell at once)
        #: or "in-process" (Cancel waits for the running call to return).
        self.isolation = check_isolation(isolation)
        self._lock = threading.Lock()
        self._clear_run_state()
        self.status = StatusArea()
        guard = self.status.guard

        known = all_backends()
        self.backends = BackendPicker(known, default=backends if backends is not None else _default_backends())
        self.kernels = KernelPicker(kernels(), variants, default=kernel)
        self.sizes = SizeControls()
        self.options = RunOptions()

        self.run_button = w.Button(description="Run", button_style="primary", icon="play").add_class("wb-run")
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True).add_class("wb-cancel")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Progress",
                                      layout=w.Layout(width="260px")).add_class("wb-progress")
        self.progress_label = w.HTML().add_class("wb-progress-label")
        #: The cell running now and for how long (read from the store's in-flight marker while a run goes).
        self.running_label = w.HTML().add_class("wb-running")
        #: Which run the plot, table and exports show.
        self.shown = w.HTML().add_class("wb-shown")

        self.plot = PlotView()
        self.table = TableView()
        self.memory = MemoryView()
        #: The selected kernel's series across the store's runs (issue 41).
        self.history = HistoryView()
        self.exports = ExportPanel(self._export_to, folder=export_dir)
        self.controller = RunController(on_row=guard("updating the views", self._on_row),
                                        on_done=guard("finishing the run", self._on_done))
        self._ticker: threading.Thread | None = None
        self._ticker_stop = threading.Event()

        self.backends.observe(guard("changing backends", lambda _: self._backends_changed()))
        self.kernels.kernel.observe(guard("changing kernel", lambda _: self._kernel_changed()), names="value")
        for cb in self.options.modes.values():
            cb.observe(guard("changing modes", lambda _: self._modes_changed()), names="value")
        self.plot.metric.observe(guard("drawing the plot", lambda _: self.plot.redraw()), names="value")
        self.plot.baseline.observe(guard("drawing the plot", lambda _: self._redraw_speedup()), names="value")
        self.run_button.on_click(guard("starting the run", lambda _: self.run()))
        self.cancel_button.on_click(guard("cancelling", lambda _: self.cancel()))
        for fmt, button in self.exports.buttons.items():
            button.on_click(guard(f"exporting {fmt}", lambda _, fmt=fmt: self.exports.export(fmt)))

        self._backends_changed()
        self._kernel_changed()
        self.widget = self._layout()

    def _clear_run_state(self) -> None:
        self.run_id: str | None = None
        self.run_kernel: str | None = None  # the kernel of the run shown (not the dropdown's)
        self.run_name: str | None = None
        self.run_status: str | None = None  # running / finished / interrupted
        self.rows: list[dict] = []
        self._by_key: dict[str, dict] = {}
        self._real_cells = 0
        self._rounds = 1

    # -- layout ----------------------------------------------------------
    def _layout(self) -> w.Widget:
        title = w.HTML("<h3 style='margin:4px 0'>Kernel Workbench</h3>")
        # Fixed width, never shrinking when a wide table arrives; when the two columns do not fit side by
        # side (a narrow notebook, the file browser open at 1280 px) the results wrap below the controls
        # instead of pushing the controls out of the output area.
        left = w.VBox([self.backends.widget, self.kernels.widget, self.sizes.widget, self.options.widget],
                      layout=w.Layout(flex="0 0 370px", width="370px", padding="0 12px 0 0", overflow="hidden")
                      ).add_class("wb-controls")
        actions = w.HBox([self.run_button, self.cancel_button, self.progress, self.progress_label],
                         layout=w.Layout(flex_flow="row wrap", align_items="center"))
        right = w.VBox([actions, self.running_label, self.status.widget, self.shown, self.plot.widget,
                        w.HTML("<b>Peak memory</b>"), self.memory.widget,
                        w.HTML("<b>Results</b>"), self.table.widget, self.exports.widget,
                        w.HTML("<b>History</b>"), self.history.widget],
                       layout=w.Layout(flex="1 1 460px", min_width="0", max_width="100%", overflow="auto")
                       ).add_class("wb-results-pane")
        body = w.HBox([left, right], layout=w.Layout(flex_flow="row wrap", align_items="flex-start",
                                                      width="100%"))
        return w.VBox([title, body], layout=w.Layout(width="100%", overflow="hidden")).add_class("wb-dashboard")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # -- reacting to the controls -----------------------------------------
    def _backends_changed(self) -> None:
        self.options.set_dtypes(self.backends.dtypes())
        self.kernels.refresh(self.backends.runtimes(), self.options.selected_modes)

    def _modes_changed(self) -> None:
        self.kernels.refresh(self.backends.runtimes(), self.options.selected_modes)

    def _kernel_changed(self) -> None:
        self.kernels.refresh(self.backends.runtimes(), self.options.selected_modes)
        self.sizes.set_kernel(self.kernels.specs.get(self.kernels.kernel.value))
        new = self.kernels.kernel.value
        if self.history.kernel != new and not self.controller.running:
            self.history.update(self.store, new)
        if self.controller.running:
            if new != self.run_kernel:
                self.status.show(f"the {self.run_kernel} run goes on and stays shown; {new} is for the next run",
                                 "info")
            return
        if self.run_kernel is not None and new != self.run_kernel:
            old = self.run_kernel
            self.clear_results()
            self.status.show(f"kernel changed to {new}: the {old} results were cleared (they stay in the store)")
        elif self.run_kernel is None:
            self.clear_results()

    def clear_results(self) -> None:
        """Forget the shown run: plot, memory, table, exports and progress go blank."""
        with self._lock:
            self._clear_run_state()
        self.plot.clear()
        self.memory.clear()
        self.table.clear()
        self.exports.clear()
        self.progress.value, self.progress.max = 0, 1
        self.progress_label.value = ""
        self.running_label.value = ""
        self.shown.value = ""

    def _redraw_speedup(self) -> None:
        if self.plot.metric.value == "speedup":
            self.plot.redraw()

    # -- running ----------------------------------------------------------
    def sweep_spec(self) -> Any:
        """The :class:`workbench.sweep.driver.SweepSpec` the controls describe."""
        problems = []
        if not self.backends.selected:
            problems.append("select at least one available backend")
        if not self.options.selected_modes:
            problems.append("select at least one mode")
        elif self.kernels.checkboxes and not self.kernels.runnable_variants:
            problems.append("none of the selected variants has a selected mode: none of this kernel's variants "
                            f"is {' or '.join(self.options.selected_modes)}")
        elif not self.kernels.selected_variants:
            problems.append("select at least one variant")
        sizes = self.sizes.sizes()
        if not sizes:
            problems.append("choose at least one size")
        if problems:
            raise ValueError("; ".join(problems))
        budget = float(self.options.budget.value)
        # The variant boxes of unticked modes are disabled and unticked: the mode boxes decide what runs.
        return SweepSpec(kernels=[self.kernels.kernel.value], variants=self.kernels.selected_variants,
                         backends=self.backends.selected, dtypes=(self.options.dtype.value,), sizes=sizes,
                         modes=self.options.selected_modes, cache=self.options.cache.value, budget_s=budget,
                         timeout_s=max(120.0, 20 * budget),  # room for a first-call compile
                         isolation=self.isolation)

    def run(self) -> None:
        """Start a sweep of the current selection in the background."""
        if self.controller.running:
            self.status.show("a run is already in progress", "warn")
            return
        try:
            spec = self.sweep_spec()
            spec.check()  # budget, sizes ...: a message here, never an orphan run
            cells = spec.cells()
        except ValueError as exc:
            self.status.show(str(exc), "warn")
            return
        real = [c for c in cells if not c.unsupported]
        if not real:
            self.status.show("none of the selected variant/backend pairs can run: "
                             + "; ".join(sorted({c.unsupported for c in cells if c.unsupported}))[:300], "warn")
            return
        kernel = self.kernels.kernel.value
        self.clear_results()
        with self._lock:
            self.run_kernel, self.run_status = kernel, "running"
            self.run_name = f"dashboard {kernel}"
            self._real_cells, self._rounds = len(real), spec.n_rounds()
        self.run_button.disabled = True
        self._set_cancel(enabled=True)
        self.progress.value, self.progress.max = 0, len(real)
        self.progress_label.value = f"0/{len(real)} cells"
        self.running_label.value = _running_html("starting: worker process and ceilings…"
                                                 if self.isolation == "process" else "starting…")
        self.status.last_error = None
        self.plot.expected_series = len({(c.variant, c.backend) for c in real})
        self.plot.clear("drawn after the first cell")
        self.memory.clear("drawn when the run finishes")
        self._show_run()
        self.status.show(f"running {kernel} on {', '.join(self.backends.selected)}: {len(real)} cells × "
                         f"{spec.n_rounds()} rounds")
        self.controller.start(spec, store=self.store, name=self.run_name)
        self.store = self.controller.store
        self._start_ticker()

    def cancel(self) -> None:
        """Stop the running cell (in a worker process: at once; in-process: when its call returns); finished
        rows stay and the run is stored as interrupted."""
        if not self.controller.running:
            return
        self.controller.cancel()
        self._set_cancel(enabled=False)
        if self.isolation == "process":
            self.status.show("cancelling: stopping the running cell (its worker process is stopped at once); "
                             "finished cells are kept", "warn")
        else:
            self.status.show("cancelling: waiting for the running call to return (cells run in-process here, "
                             "so a call cannot be interrupted); finished cells are kept", "warn")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running sweep has finished (for scripts and tests)."""
        done = self.controller.join(timeout)
        if done and self._ticker is not None:
            self._ticker_stop.set()
            self._ticker.join(5)
        return done

    # -- the running cell ---------------------------------------------------
    def _start_ticker(self) -> None:
        self._ticker_stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick_loop, args=(self._ticker_stop,),
                                        name="workbench-dashboard-ticker", daemon=True)
        self._ticker.start()

    def _tick_loop(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            if not self.controller.running:
                break
            self.status.guard("showing the running cell", self.update_running)()

    def update_running(self) -> None:
        """Name the cell running now and its elapsed time (from the store's in-flight marker)."""
        if not self.controller.running:
            return
        marker = self.controller.in_flight()
        if marker is None:
            return  # between cells, or preparing a backend: the last text stays
        elapsed = _elapsed_s(marker.get("started_at"))
        round_text = f", round {marker.get('round')}/{self._rounds}" if self._rounds > 1 else ""
        if self.controller.cancel_requested:
            verb = "stopping" if self.isolation == "process" else "waiting for the call to return:"
        else:
            verb = "running"
        text = f"{verb} {marker.get('label', marker.get('cell_key'))}{round_text}"
        if elapsed is not None:
            text += f" — {elapsed:.1f} s"
        if self.controller.running and not self._ticker_stop.is_set():  # the run may have ended meanwhile
            self.running_label.value = _running_html(text)

    # -- rows ---------------------------------------------------------------
    @property
    def df(self) -> pd.DataFrame:
        """Every row of the shown run so far, as stored (one per cell: its latest round)."""
        with self._lock:
            return pd.DataFrame(self.rows)

    def visible(self, df: pd.DataFrame) -> pd.DataFrame:
        """``df`` without the cells that cannot run (status ``unsupported``: a numba variant on numpy, a dtype
        the backend lacks ...). The sweep stores them so a report can say why; the dashboard never counts,
        shows or exports them."""
        if df.empty or "status" not in df:
            return df
        return df[df["status"] != Status.UNSUPPORTED].reset_index(drop=True)

    def _progress(self) -> tuple[int, int]:
        """(round, cells done in it): the bar moves with every cell of every round, rather than once per
        ``rounds`` cells. A failed cell is done in every round (later rounds leave it alone)."""
        rows = [r for r in self._by_key.values() if r.get("status") != Status.UNSUPPORTED]
        current = max((min(_rounds_of(r), self._rounds) for r in rows if not _final(r)), default=1)
        done = sum(1 for r in rows if _final(r) or _rounds_of(r) >= current)
        return current, min(done, self._real_cells)

    def _with_result(self) -> int:
        """Cells with a stored result (any round): what a finished or cancelled run counts."""
        return min(sum(1 for r in self._by_key.values() if r.get("status") != Status.UNSUPPORTED), self._real_cells)

    def _on_row(self, row: dict, index: int, total: int) -> None:
        if row.get("status") == Status.UNSUPPORTED:
            return  # stored by the sweep; not a cell of this run as far as the dashboard goes
        with self._lock:
            key = row.get("cell_key") or f"#{len(self._by_key)}"
            self._by_key[key] = dict(row)
            self.rows = list(self._by_key.values())
            if row.get("run_id"):
                self.run_id = row["run_id"]
            current, done = self._progress()
        self.progress.max = max(self._real_cells, 1)
        self.progress.value = min(done, self.progress.max)
        rounds = f" of round {current}/{self._rounds}" if self._rounds > 1 else ""
        self.progress_label.value = html.escape(
            f"{done}/{self._real_cells} cells{rounds} · last: {row.get('variant')} @ {row.get('backend')} "
            f"{row.get('size_label', '')}: {row.get('status')}")
        self._show_run()
        self._refresh_views(memory=False)

    def _on_done(self, outcome: Any, error: BaseException | None) -> None:
        try:
            self._ticker_stop.set()
            if outcome is not None:
                self.store = outcome.store
                with self._lock:
                    self.run_id = outcome.run_id
                    self.run_status = "interrupted" if outcome.interrupted else "finished"
                    for r in _records(outcome.rows or []):
                        if r.get("status") != Status.UNSUPPORTED:
                            self._by_key[r.get("cell_key") or f"#{len(self._by_key)}"] = dict(r)
                    self.rows = list(self._by_key.values())
                    current, _ = self._progress()
                    done = self._with_result()
                self.progress.max = max(self._real_cells, 1)
                self.progress.value = min(done, self.progress.max)
                stopped = f", cancelled in round {current}/{self._rounds}" if outcome.interrupted else ""
                self.progress_label.value = html.escape(f"{done}/{self._real_cells} cells with a result{stopped}")
            elif self.controller.run_id is not None:
                self.run_id = self.controller.run_id
                self.run_status = "interrupted"
            self.running_label.value = ""
            self.plot.expected_series = 0  # the run is over: the metrics offered are what its rows can draw
            df = self.df
            self._show_run()
            if len(df):
                self._refresh_views()
            if error is not None:
                self.status.error("the run stopped with an error", error)
            else:
                counts = df["status"].value_counts().to_dict() if "status" in df else {}
                summary = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no cells"
                cancelled = outcome is not None and outcome.interrupted
                verb = "cancelled" if cancelled else "finished"
                if cancelled:
                    summary += (f" ({self._with_result()}/{self._real_cells} cells with a result); the run is stored"
                                " as interrupted")
                wall = (f" {'after' if cancelled else 'in'} {outcome.wall_s:.1f} s"
                        if outcome is not None and outcome.wall_s else "")
                problem = f"; display problem: {self.status.last_error}" if self.status.last_error else ""
                self.status.show(f"{verb}{wall}: {summary} (run {self.run_id}){problem}",
                                 "warn" if cancelled or problem or set(counts) - {"ok"} else "ok")
            self.history.update(self.store, self.run_kernel or self.kernels.kernel.value)
            self.exports.enable(self.run_id is not None and self.store is not None and len(df) > 0)
        finally:
            self.run_button.disabled = False
            self._set_cancel(enabled=False)

    def _set_cancel(self, enabled: bool) -> None:
        """Cancel is orange only while it can be pressed (a disabled orange button reads as pressable)."""
        self.cancel_button.disabled = not enabled
        self.cancel_button.button_style = "warning" if enabled else ""

    def _show_run(self) -> None:
        if self.run_kernel is None:
            self.shown.value = ""
            return
        state = {"running": "in progress", "finished": "finished",
                 "interrupted": "cancelled (stored as interrupted)"}.get(self.run_status or "", "")
        rid = f" · run {self.run_id}" if self.run_id else ""
        self.shown.value = (f'<span style="font-size:12px;color:#555">Showing <b>{html.escape(self.run_kernel)}'
                            f"</b> · {html.escape(self.run_name or '')}{html.escape(rid)} · {html.escape(state)}"
                            "</span>")

    def _run_names(self) -> dict[str, str]:
        return {self.run_id: self.run_name} if self.run_id and self.run_name else {}

    def _preferred_baseline(self, series: list[str]) -> str | None:
        """The kernel's library variant where measured (numpy's first), else the first measured series."""
        vs = self.kernels.variants_of(self.run_kernel) if self.run_kernel else {}
        library = [k for k in series if getattr(vs.get(k.partition(" @ ")[0]), "library", False)]
        on_numpy = [k for k in series if k.endswith("@ numpy")]
        library.sort(key=lambda k: not k.endswith("@ numpy"))
        return (library or on_numpy or series or [None])[0]

    def _refresh_views(self, memory: bool = True) -> None:
        """Redraw from the rows so far, in the report's colours (one per variant@backend).

        This runs on the sweep's thread between cells, never during one, so
        drawing cannot steal a core from a measurement; the memory plot waits
        for the end of the run to keep that pause short.
        """
        from workbench.report.styles import styles_for

        df = self.visible(self.df)
        styles, names = styles_for(df), self._run_names()
        series = measured_series(df)
        self.plot.set_baselines(series, preferred=self._preferred_baseline(series))
        guard = self.status.guard
        guard("drawing the results table", self.table.update)(df)
        guard("drawing the plot", self.plot.update)(df, styles, names)
        if memory:
            guard("drawing the memory plot", self.memory.update)(df, styles, names)

    # -- exporting --------------------------------------------------------
    def export_data(self) -> Any:
        """The shown run as :class:`workbench.report.data.ReportData`, its cells that cannot run left out."""
        data = gather(self.store, [self.run_id])
        data.df = self.visible(data.df)
        return data

    def _export_to(self, fmt: str, folder: Path) -> Path:
        if self.store is None or self.run_id is None or self.run_kernel is None:
            raise RuntimeError("nothing to export yet: run a sweep first")
        if self.controller.running and self.run_status == "running":  # its rows are in: the thread only tidies up
            raise RuntimeError("the run is still going: export when it has finished (or cancel it)")
        from workbench.report import write_report

        data = self.export_data()
        status = self.run_status or "finished"
        if data.runs is not None and len(data.runs) and "status" in data.runs:
            status = str(data.runs["status"].iloc[0])
        suffix = "-interrupted" if status == "interrupted" else ""
        folder.mkdir(parents=True, exist_ok=True)
        # Named after the run's kernel, never the dropdown's (which may have moved on).
        from workbench.report.exporters import safe_file_stem  # names from data become a file name, never a path

        path = folder / f"{safe_file_stem(f'{self.run_kernel}-{self.run_id}{suffix}')}.{fmt}"
        kw: dict[str, str | None] = {}
        if fmt in ("html", "md"):
            kw["baseline"] = self.plot.baseline.value or None  # the reference chosen here
            if kw["baseline"]:
                check_baseline(data.df, kw["baseline"])  # one that names no series is an error, listing them
        elif fmt == "csv":  # a bare table: each row says which run it is from and how that run ended
            df = data.df.copy()
            df.insert(0, "run_status", status)
            df.insert(0, "run_name", self.run_name)
            data.df = df
        written = write_report(data, None, path, format=fmt, **kw)
        return Path(written) if isinstance(written, (str, Path)) else path


def _final(row: dict) -> bool:
    """The cell ended (failed): later rounds leave it alone."""
    try:
        return Status(row.get("status")).final
    except ValueError:
        return False


def _rounds_of(row: dict) -> int:
    """Rounds a row has (a row from before rounds existed counts as one)."""
    return int(row.get("rounds") or 1)


def _running_html(text: str) -> str:
    return f'<span style="font-size:12px;color:#0b5cad">{html.escape(text)}</span>'


def _elapsed_s(started_at: Any) -> float | None:
    if not started_at:
        return None
    try:
        t = datetime.fromisoformat(str(started_at).replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (datetime.now(timezone.utc) - t).total_seconds())


def _default_backends() -> list[str]:
    try:
        return sorted({"numpy", get_backend().name})
    except Exception:  # noqa: BLE001 - no current backend: numpy is always there
        return ["numpy"]


def _records(rows: Any) -> list[dict]:
    if isinstance(rows, pd.DataFrame):
        return rows.to_dict("records")
    return list(rows)

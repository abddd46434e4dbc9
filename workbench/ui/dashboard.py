"""The dashboard: controls on the left, progress, plots, table and exports on the right.

``Dashboard()`` in a notebook cell shows it (JupyterLab, Jupyter Notebook, Voila).
Everything that can fail — probing, building a sweep, plotting, exporting —
goes through :class:`StatusArea.guard`, so an error becomes a message and
a failed cell becomes a row whose status says what went wrong.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

from .controls import BackendPicker, KernelPicker, RunOptions, SizeControls
from .run_controller import RunController
from .status import StatusArea
from .views import ExportPanel, MemoryView, PlotView, TableView


class Dashboard:
    """Pick backends, a kernel, its variants and sizes; run, watch, compare, export."""

    def __init__(self, store: Any = None, kernel: str | None = "saxpy", backends: list[str] | None = None,
                 export_dir: str = "reports") -> None:
        from ..backends.registry import all_backends
        from ..catalog import kernels, variants

        self.store = store
        self.run_id: str | None = None
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self.status = StatusArea()
        guard = self.status.guard

        known = all_backends()
        self.backends = BackendPicker(known, default=backends if backends is not None else _default_backends())
        self.kernels = KernelPicker(kernels(), variants, default=kernel)
        self.sizes = SizeControls()
        self.options = RunOptions()

        self.run_button = w.Button(description="Run", button_style="primary", icon="play").add_class("wb-run")
        self.cancel_button = w.Button(description="Cancel", button_style="warning", icon="stop",
                                      disabled=True).add_class("wb-cancel")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Progress",
                                      layout=w.Layout(width="300px")).add_class("wb-progress")
        self.progress_label = w.HTML().add_class("wb-progress-label")

        self.plot = PlotView()
        self.table = TableView()
        self.memory = MemoryView()
        self.exports = ExportPanel(self._export_to, folder=export_dir)
        self.controller = RunController(on_row=guard("updating the views", self._on_row),
                                        on_done=guard("finishing the run", self._on_done))

        self.backends.observe(guard("changing backends", lambda _: self._backends_changed()))
        self.kernels.kernel.observe(guard("changing kernel", lambda _: self._kernel_changed()), names="value")
        self.kernels.observe_variants(guard("changing variants", lambda _: self._update_baselines()))
        self.plot.metric.observe(guard("drawing the plot", lambda _: self.plot.redraw()), names="value")
        self.plot.baseline.observe(guard("drawing the plot", lambda _: self._redraw_speedup()), names="value")
        self.run_button.on_click(guard("starting the run", lambda _: self.run()))
        self.cancel_button.on_click(guard("cancelling", lambda _: self.cancel()))
        for fmt, button in self.exports.buttons.items():
            button.on_click(guard(f"exporting {fmt}", lambda _, fmt=fmt: self.exports.export(fmt)))

        self._backends_changed()
        self._kernel_changed()
        self.widget = self._layout()

    # -- layout ----------------------------------------------------------
    def _layout(self) -> w.Widget:
        title = w.HTML("<h3 style='margin:4px 0'>Kernel Workbench</h3>")
        left = w.VBox([self.backends.widget, self.kernels.widget, self.sizes.widget, self.options.widget],
                      layout=w.Layout(flex="0 0 420px", width="420px", padding="0 12px 0 0")
                      ).add_class("wb-controls")  # never shrinks when a wide table arrives
        actions = w.HBox([self.run_button, self.cancel_button, self.progress, self.progress_label],
                         layout=w.Layout(flex_flow="row wrap", align_items="center"))
        right = w.VBox([actions, self.status.widget, self.plot.widget,
                        w.HTML("<b>Peak memory</b>"), self.memory.widget,
                        w.HTML("<b>Results</b>"), self.table.widget, self.exports.widget],
                       layout=w.Layout(flex="1 1 0", min_width="480px", overflow="auto")
                       ).add_class("wb-results-pane")
        return w.VBox([title, w.HBox([left, right])]).add_class("wb-dashboard")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # -- reacting to the controls -----------------------------------------
    def _backends_changed(self) -> None:
        self.options.set_dtypes(self.backends.dtypes())
        self.kernels.refresh(self.backends.runtimes())
        self._update_baselines()

    def _kernel_changed(self) -> None:
        self.kernels.refresh(self.backends.runtimes())
        self.sizes.set_kernel(self.kernels.specs.get(self.kernels.kernel.value))
        self._update_baselines()

    def _candidate_pairs(self) -> list[tuple[str, str]]:
        """(variant, backend) pairs the current selection will run."""
        name = self.kernels.kernel.value
        vs = self.kernels.variants_of(name) if name else {}
        pairs = []
        for v in self.kernels.selected_variants:
            for b in self.backends.selected:
                if self.backends.backends[b].runtime in vs[v].runtimes:
                    pairs.append((v, b))
        return pairs

    def _update_baselines(self) -> None:
        name = self.kernels.kernel.value
        vs = self.kernels.variants_of(name) if name else {}
        pairs = self._candidate_pairs()
        keys = [f"{v} @ {b}" for v, b in pairs]
        library = next((f"{v} @ {b}" for v, b in pairs if vs[v].library), None)
        self.plot.set_baselines(keys, preferred=library)

    def _redraw_speedup(self) -> None:
        if self.plot.metric.value == "speedup":
            self.plot.redraw()

    # -- running ----------------------------------------------------------
    def sweep_spec(self) -> Any:
        """The :class:`workbench.sweep.SweepSpec` the controls describe."""
        from ..sweep import SweepSpec

        problems = []
        if not self.backends.selected:
            problems.append("select at least one available backend")
        if not self.kernels.selected_variants:
            problems.append("select at least one variant")
        if not self.options.selected_modes:
            problems.append("select at least one mode")
        sizes = self.sizes.sizes()
        if not sizes:
            problems.append("choose at least one size")
        # The sweep runs named variants whatever their mode, so the mode boxes filter the names here.
        vs = self.kernels.variants_of(self.kernels.kernel.value) if self.kernels.kernel.value else {}
        chosen = [v for v in self.kernels.selected_variants if vs[v].mode in self.options.selected_modes]
        if self.kernels.selected_variants and self.options.selected_modes and not chosen:
            problems.append("none of the selected variants has a selected mode")
        if problems:
            raise ValueError("; ".join(problems))
        budget = float(self.options.budget.value)
        return SweepSpec(kernels=[self.kernels.kernel.value], variants=chosen,
                         backends=self.backends.selected, dtypes=(self.options.dtype.value,), sizes=sizes,
                         modes=self.options.selected_modes, cache=self.options.cache.value, budget_s=budget,
                         timeout_s=max(120.0, 20 * budget))  # room for a first-call compile

    def run(self) -> None:
        """Start a sweep of the current selection in the background."""
        if self.controller.running:
            self.status.show("a run is already in progress", "warn")
            return
        try:
            spec = self.sweep_spec()
        except ValueError as exc:
            self.status.show(str(exc), "warn")
            return
        with self._lock:
            self.rows = []
        self.run_id = None
        self.exports.enable(False)
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.progress.value, self.progress.max = 0, 1
        self.progress_label.value = "starting…"
        self.status.last_error = None
        self.plot.output.outputs = ()
        self.memory.output.outputs = ({"output_type": "display_data", "metadata": {},
                                       "data": {"text/plain": "drawn when the run finishes"}},)
        self._update_baselines()
        self.status.show(f"running {self.kernels.kernel.value} on {', '.join(self.backends.selected)}")
        self.controller.start(spec, store=self.store, name=f"dashboard {self.kernels.kernel.value}")

    def cancel(self) -> None:
        """Stop after the current cell; finished rows stay."""
        self.controller.cancel()
        self.cancel_button.disabled = True
        self.status.show("cancelling: stopping the running cell (its worker process is stopped at once; "
                         "in-process, at its next call)…", "warn")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running sweep has finished (for scripts and tests)."""
        return self.controller.join(timeout)

    @property
    def df(self) -> pd.DataFrame:
        """Every row of the current run so far, as stored."""
        with self._lock:
            return pd.DataFrame(self.rows)

    def visible(self, df: pd.DataFrame) -> pd.DataFrame:
        """``df`` without the variant/backend pairs that cannot meet (a numba variant on numpy ...).

        The sweep tries named variants on every selected backend and records the
        mismatches as unsupported; they stay in the store and the exports, but
        the dashboard's plot and table show only what the user could have meant.
        """
        if df.empty or "status" not in df:
            return df
        vs = self.kernels.variants_of(self.kernels.kernel.value) if self.kernels.kernel.value else {}
        known = self.backends.backends

        def meets(row: Any) -> bool:
            v, b = vs.get(row["variant"]), known.get(row["backend"])
            return row["status"] != "unsupported" or v is None or b is None or b.runtime in v.runtimes

        return df[df.apply(meets, axis=1)].reset_index(drop=True)

    def _on_row(self, row: dict, index: int, total: int) -> None:
        with self._lock:
            self.rows.append(dict(row))
            if row.get("run_id"):
                self.run_id = row["run_id"]
        self.progress.max = max(total, 1)
        self.progress.value = min(index + 1, self.progress.max)
        self.progress_label.value = (f"{index + 1}/{total}: {row.get('variant')} @ {row.get('backend')} "
                                     f"{row.get('size_label', '')} — {row.get('status')}")
        self._refresh_views(memory=False)

    def _on_done(self, outcome: Any, error: BaseException | None) -> None:
        try:
            if outcome is not None:
                self.run_id = outcome.run_id
                self.store = outcome.store
                if outcome.rows is not None and len(outcome.rows):
                    with self._lock:
                        self.rows = [dict(r) for r in _records(outcome.rows)]
            df = self.df
            if len(df):
                self._refresh_views()
            if error is not None:
                self.status.error("the run stopped with an error", error)
            else:
                shown = self.visible(df)
                counts = shown["status"].value_counts().to_dict() if "status" in shown else {}
                summary = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no cells"
                if len(shown) < len(df):
                    summary += f" ({len(df) - len(shown)} variant/backend pairs that cannot meet not shown)"
                verb = "cancelled" if outcome is not None and outcome.interrupted else "finished"
                wall = f" in {outcome.wall_s:.1f} s" if outcome is not None and outcome.wall_s else ""
                problem = f"; display problem: {self.status.last_error}" if self.status.last_error else ""
                self.status.show(f"{verb}: {summary}{wall} (run {self.run_id}){problem}",
                                 "warn" if verb == "cancelled" or problem or set(counts) - {"ok"} else "ok")
            self.exports.enable(self.run_id is not None and self.store is not None and len(df) > 0)
        finally:
            self.run_button.disabled, self.cancel_button.disabled = False, True

    def _refresh_views(self, memory: bool = True) -> None:
        """Redraw from the rows so far.

        This runs on the sweep's thread between cells, never during one, so
        drawing cannot steal a core from a measurement; the memory plot waits
        for the end of the run to keep that pause short.
        """
        df = self.visible(self.df)
        guard = self.status.guard
        guard("drawing the results table", self.table.update)(df)
        guard("drawing the plot", self.plot.update)(df)
        if memory:
            guard("drawing the memory plot", self.memory.update)(df)

    # -- exporting --------------------------------------------------------
    def _export_to(self, fmt: str, folder: Path) -> Path:
        if self.store is None or self.run_id is None:
            raise RuntimeError("nothing to export yet: run a sweep first")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.kernels.kernel.value}-{self.run_id}.{fmt}"
        from ..report import write_report

        written = write_report(self.store, [self.run_id], path, format=fmt)
        return Path(written) if isinstance(written, (str, Path)) else path


def _default_backends() -> list[str]:
    from ..backends.registry import get_backend

    try:
        return sorted({"numpy", get_backend().name})
    except Exception:  # noqa: BLE001 - no current backend: numpy is always there
        return ["numpy"]


def _records(rows: Any) -> list[dict]:
    if isinstance(rows, pd.DataFrame):
        return rows.to_dict("records")
    return list(rows)

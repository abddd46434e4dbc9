"""The dashboard driven in-process: controls, a run in the background thread, cancel, errors, exports."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("ipywidgets")

from workbench.backends.registry import all_backends  # noqa: E402
from workbench.catalog import registry as catalog  # noqa: E402
from workbench.catalog import variant  # noqa: E402
from workbench.store import Store  # noqa: E402
from workbench.ui import Dashboard  # noqa: E402
from workbench.ui.controls import geometric_sizes  # noqa: E402

RUN_TIMEOUT_S = 180


def small_dashboard(tmp_path, steps: int = 2, **kw) -> Dashboard:
    d = Dashboard(store=str(tmp_path / "results.sqlite"), backends=["numpy"], kernel="saxpy",
                  export_dir=str(tmp_path / "reports"), **kw)
    d.sizes.source.value = "range"
    d.sizes.axis_min["n"].value = 1000
    d.sizes.axis_max["n"].value = 50_000
    d.sizes.steps.value = steps
    d.options.budget.value = 0.02
    return d


def finish(d: Dashboard) -> None:
    assert d.wait(RUN_TIMEOUT_S), "the sweep did not finish in time"
    assert not d.run_button.disabled and d.cancel_button.disabled


@pytest.fixture
def broken_variant():
    """A saxpy variant on numpy whose kernel raises, removed again afterwards."""

    @variant("saxpy", "wb-test-broken", "numpy", description="raises on every call")
    def build(ctx):
        def run(inp, out):
            raise RuntimeError("deliberately broken kernel")
        return run

    yield "wb-test-broken"
    catalog.unregister_variant("saxpy", "wb-test-broken")


def test_backend_picker_lists_every_backend_and_disables_unavailable(tmp_path):
    d = small_dashboard(tmp_path)
    known = all_backends()
    assert set(d.backends.checkboxes) == set(known)
    for name, cb in d.backends.checkboxes.items():
        probe = known[name].probe()
        assert cb.disabled == (not probe.available)
        assert f"wb-backend-{name}" in cb._dom_classes
        if not probe.available:
            assert not cb.value and probe.reason in cb.tooltip
    assert d.backends.selected == ["numpy"]


def test_variants_follow_kernel_and_backends(tmp_path):
    d = small_dashboard(tmp_path)
    numpy_only = set(d.kernels.checkboxes)
    assert numpy_only and all("numpy" in catalog.get_variant("saxpy", v).runtimes for v in numpy_only)
    other = next((n for n, cb in d.backends.checkboxes.items() if not cb.disabled and n != "numpy"), None)
    if other is not None:
        d.backends.checkboxes[other].value = True
        runtime = all_backends()[other].runtime
        assert any(runtime in catalog.get_variant("saxpy", v).runtimes for v in d.kernels.checkboxes)
    first = next(iter(d.kernels.checkboxes))
    d.kernels.checkboxes[first].value = False
    d.backends.checkboxes["numpy"].value = True  # a backend change keeps the user's ticks
    d._backends_changed()
    assert not d.kernels.checkboxes[first].value
    d.kernels.kernel.value = "softmax"
    assert d.sizes.spec.name == "softmax" and set(d.sizes.axis_min) == {"rows", "cols"}
    assert d.kernels.checkboxes and all(cb.value for cb in d.kernels.checkboxes.values())  # new kernel: all ticked


def test_geometric_sizes():
    assert geometric_sizes({"n": (10, 1000)}, 3) == [{"n": 10}, {"n": 100}, {"n": 1000}]
    assert geometric_sizes({"m": (8, 8), "k": (4, 16)}, 1) == [{"m": 8, "k": 16}]


def test_run_fills_plot_table_and_exports(tmp_path):
    d = small_dashboard(tmp_path)
    d.run_button.click()
    assert d.controller.running or d.run_id is not None
    finish(d)
    assert d.controller.error is None, d.status.widget.value
    df = d.df
    assert len(df) == 2 and set(df["status"]) == {"ok"}
    assert d.progress.value == d.progress.max and d.progress.max % 2 == 0  # 2 cells, once per round
    assert "<table" in d.table.widget.value and "saxpy" in d.table.widget.value
    assert "image/png" in d.plot.output.outputs[0]["data"]
    assert "image/png" in d.memory.output.outputs[0]["data"]
    assert "finished" in d.status.widget.value
    # every metric, speed-up included, draws without an error
    for _, metric in d.plot.metric.options:
        d.plot.metric.value = metric
        assert "image/png" in d.plot.output.outputs[0]["data"], metric
    assert d.status.last_error is None
    written = []
    for fmt, button in d.exports.buttons.items():
        assert not button.disabled
        button.click()
        assert d.exports.last_path is not None and d.exports.last_path.suffix == f".{fmt}"
        assert d.exports.last_path.is_file() and d.exports.last_path.stat().st_size > 0
        assert str(d.exports.last_path) in d.exports.written.value
        written.append(d.exports.last_path)
    assert all(p.parent == (tmp_path / "reports").resolve() for p in written)
    assert len(Store(tmp_path / "results.sqlite").results([d.run_id])) == 2


def test_cancel_keeps_finished_rows(tmp_path):
    d = small_dashboard(tmp_path, steps=12)
    d.run_button.click()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not d.rows and time.monotonic() < deadline:
        time.sleep(0.05)
    assert d.rows, "no cell finished"
    d.cancel_button.click()
    finish(d)
    outcome = d.controller.outcome
    assert outcome.interrupted
    assert 1 <= len(d.rows) < 12
    stored = Store(tmp_path / "results.sqlite").results([d.run_id])
    assert len(stored) == len(d.rows)
    assert "cancelled" in d.status.widget.value
    assert d.table.widget.value.count("<tr") == len(d.rows) + 1  # header + one line per finished cell


def test_failing_variant_is_a_status_not_a_crash(tmp_path, broken_variant):
    d = small_dashboard(tmp_path, steps=1)
    assert broken_variant in d.kernels.checkboxes
    for name, cb in d.kernels.checkboxes.items():
        cb.value = name in ("numpy", broken_variant)
    d.run_button.click()
    finish(d)
    statuses = dict(zip(d.df["variant"], d.df["status"], strict=True))
    assert statuses == {"numpy": "ok", broken_variant: "error"}
    assert "error" in d.table.widget.value
    assert "image/png" in d.plot.output.outputs[0]["data"]  # the good variant is still plotted
    assert "finished" in d.status.widget.value and "1 error" in d.status.widget.value


def test_display_errors_go_to_the_status_area(tmp_path, monkeypatch):
    d = small_dashboard(tmp_path, steps=1)

    def broken_plot(df):
        raise RuntimeError("plotting exploded")

    monkeypatch.setattr(d.plot, "update", broken_plot)
    d.run_button.click()
    finish(d)
    assert set(d.df["status"]) == {"ok"}
    assert "<table" in d.table.widget.value
    assert "plotting exploded" in d.status.widget.value
    # a bad selection is a message, not an exception
    for cb in d.kernels.checkboxes.values():
        cb.value = False
    d.run_button.click()
    assert "select at least one variant" in d.status.widget.value
    assert not d.controller.running


def test_export_before_any_run_reports_instead_of_raising(tmp_path):
    d = small_dashboard(tmp_path)
    assert all(b.disabled for b in d.exports.buttons.values())
    d.exports.buttons["html"].click()  # click() bypasses `disabled`, as a stale front end might
    assert "nothing to export yet" in d.status.widget.value
    assert not (tmp_path / "reports").exists()


def test_mismatched_pairs_are_kept_in_the_store_but_not_shown(tmp_path):
    if not all_backends()["numba"].probe().available:
        pytest.skip("numba is not available here")
    d = small_dashboard(tmp_path, steps=1)
    d.backends.checkboxes["numba"].value = True
    for name, cb in d.kernels.checkboxes.items():
        cb.value = name in ("numpy", "numba")
    d.run_button.click()
    finish(d)
    pairs = set(zip(d.df["variant"], d.df["backend"], strict=True))
    assert {("numpy", "numpy"), ("numba", "numba")} <= pairs
    shown = d.visible(d.df)
    assert set(zip(shown["variant"], shown["backend"], strict=True)) == {("numpy", "numpy"), ("numba", "numba")}
    assert d.table.widget.value.count("<tr") == len(shown) + 1
    if len(shown) < len(d.df):
        assert "cannot meet not shown" in d.status.widget.value


def test_modes_filter_the_named_variants(tmp_path):
    d = small_dashboard(tmp_path, steps=1)
    d.options.modes["eager"].value = False  # every saxpy variant is eager
    d.run_button.click()
    assert "none of the selected variants has a selected mode" in d.status.widget.value
    assert not d.controller.running


def test_results_table_marks_noisy_cells_and_peaks_above_100():
    from workbench.report.sample_data import synthetic_results
    from workbench.ui.views import TableView

    df = synthetic_results()
    df.loc[df.index[0], ["pct_peak_bw", "peak_note"]] = [  # as the harness writes it (it knows the cache)
        250.0, "250% of the measured (automatic probe) bandwidth ceiling: working set 48 KiB fits in the 32 MiB "
               "last-level cache, so it runs above the DRAM ceiling"]
    view = TableView()
    view.update(df)
    html = view.widget.value
    assert 'class="wb-noisy"' in html and 'title="noisy: spread' in html and "measured cells were noisy" in html
    assert 'title="250% of the measured (automatic probe) bandwidth ceiling: working set 48 KiB fits in the 32 MiB' \
        in html and "250 ⚠" not in html and "⚠</span>" in html
    assert "<script" not in html

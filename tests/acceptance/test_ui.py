"""The dashboard driven in-process: controls, a run in the background thread, cancel, errors, exports."""

from __future__ import annotations

import json
import re
import time

import pytest

pytest.importorskip("ipywidgets")

import pandas as pd  # noqa: E402

from workbench.backends.registry import all_backends  # noqa: E402
from workbench.catalog import registry as catalog  # noqa: E402
from workbench.catalog import variant  # noqa: E402
from workbench.store.database import Store  # noqa: E402
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


@pytest.fixture
def sleeping_variant():
    """A saxpy variant on numpy whose every call sleeps 30 s (a hung kernel, as far as Cancel goes)."""

    @variant("saxpy", "wb-test-sleeps", "numpy", description="sleeps 30 s per call")
    def build(ctx):
        def run(inp, out):
            time.sleep(30)
        return run

    yield "wb-test-sleeps"
    catalog.unregister_variant("saxpy", "wb-test-sleeps")


@pytest.fixture
def napping_variant():
    """A saxpy variant on numpy whose every call sleeps 2 s, removed again afterwards."""

    @variant("saxpy", "wb-test-naps", "numpy", description="sleeps 2 s per call")
    def build(ctx):
        def run(inp, out):
            time.sleep(2)
        return run

    yield "wb-test-naps"
    catalog.unregister_variant("saxpy", "wb-test-naps")


@pytest.fixture
def compiled_variant():
    """A saxpy variant on numpy in the "compiled" mode, removed again afterwards."""

    @variant("saxpy", "wb-test-compiled", "numpy", mode="compiled", description="stands in for torch.compile")
    def build(ctx):
        def run(inp, out):
            out["out"][...] = inp["x"] * 2.0 + inp["y"]
        return run

    yield "wb-test-compiled"
    catalog.unregister_variant("saxpy", "wb-test-compiled")


def only(d: Dashboard, *names: str) -> None:
    for name, cb in d.kernels.checkboxes.items():
        cb.value = name in names


def wait_for(predicate, timeout: float = RUN_TIMEOUT_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


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

    def broken_plot(df, *args):
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


def test_pairs_that_cannot_run_are_never_counted_shown_or_exported(tmp_path):
    if not all_backends()["numba"].probe().available:
        pytest.skip("numba is not available here")
    d = small_dashboard(tmp_path, steps=1)
    d.backends.checkboxes["numba"].value = True
    only(d, "numpy", "numba")
    d.run_button.click()
    finish(d)
    stored = Store(tmp_path / "results.sqlite").results([d.run_id])
    assert "unsupported" in set(stored["status"])  # the sweep keeps numba@numpy and numpy@numba ...
    pairs = set(zip(d.df["variant"], d.df["backend"], strict=True))
    assert pairs == {("numpy", "numpy"), ("numba", "numba")}  # ... the dashboard neither lists ...
    assert d.progress.max == 2 and d.progress.value == 2 and d.progress_label.value.startswith("2/2")  # ... counts
    assert d.table.widget.value.count("<tr") == 3
    assert "unsupported" not in d.status.widget.value
    d.exports.buttons["csv"].click()
    exported = pd.read_csv(d.exports.last_path)
    assert len(exported) == 2 and set(exported["status"]) == {"ok"}  # ... nor exports them
    d.exports.buttons["json"].click()
    payload = json.loads(d.exports.last_path.read_text())
    assert {r["status"] for r in payload["results"]} == {"ok"}
    d.exports.buttons["md"].click()
    assert "unsupported" not in d.exports.last_path.read_text()


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


def test_results_plot_and_exports_follow_the_run_and_clear_on_a_kernel_change(tmp_path):
    d = small_dashboard(tmp_path, steps=1)
    d.run_button.click()
    d.kernels.kernel.value = "softmax"  # while the saxpy run goes: it stays shown, and exports say saxpy
    assert d.run_kernel == "saxpy"
    finish(d)
    assert "saxpy" in d.shown.value and set(d.df["kernel"]) == {"saxpy"}
    d.exports.buttons["html"].click()
    assert d.exports.last_path.name.startswith("saxpy-")
    d.exports.buttons["csv"].click()
    assert set(pd.read_csv(d.exports.last_path)["kernel"]) == {"saxpy"}
    d.kernels.kernel.value = "gemm"  # now idle: the saxpy results go
    assert d.df.empty and d.run_id is None and d.run_kernel is None and d.shown.value == ""
    assert all(b.disabled for b in d.exports.buttons.values()) and d.exports.written.value == ""
    assert "no results yet" in d.table.widget.value and "image/png" not in d.plot.output.outputs[0]["data"]
    assert d.progress.value == 0 and d.progress_label.value == ""
    assert d.plot.baseline.options == () and d.plot.baseline.disabled
    d.exports.buttons["html"].click()  # a stale front end: a message, never gemm's name on saxpy's rows
    assert "nothing to export yet" in d.status.widget.value
    assert not list((tmp_path / "reports").glob("gemm-*"))


def test_running_cell_and_elapsed_time_are_shown_and_cancel_stops_it_at_once(tmp_path, sleeping_variant):
    d = small_dashboard(tmp_path, steps=1)
    assert d.isolation == "process"
    only(d, "numpy", sleeping_variant)
    d.run_button.click()
    wait_for(lambda: sleeping_variant in d.running_label.value, what="the sleeping cell to show")
    wait_for(lambda: re.search(r"— [1-9][0-9]*\.[0-9] s", d.running_label.value), 20, "its elapsed time to grow")
    assert "running saxpy/wb-test-sleeps on numpy" in d.running_label.value
    t0 = time.monotonic()
    d.cancel_button.click()
    assert "stopping the running cell" in d.status.widget.value
    finish(d)
    assert time.monotonic() - t0 < 15, "cancel waited for the 30 s call"
    assert d.controller.outcome.interrupted and d.run_status == "interrupted"
    assert "cancelled" in d.status.widget.value and d.running_label.value == ""
    assert Store(tmp_path / "results.sqlite").run(d.run_id)["status"] == "interrupted"
    assert "cancelled" in d.shown.value
    # the export says so, and carries the baseline chosen here
    assert d.plot.baseline.options == ("numpy @ numpy",)
    d.exports.buttons["csv"].click()
    assert d.exports.last_path.name.endswith("-interrupted.csv")
    assert set(pd.read_csv(d.exports.last_path)["run_status"]) == {"interrupted"}
    d.exports.buttons["json"].click()
    assert [r["status"] for r in json.loads(d.exports.last_path.read_text())["runs"]] == ["interrupted"]
    d.exports.buttons["html"].click()
    assert "cancelled or interrupted" in d.exports.last_path.read_text()


def test_in_process_cancel_says_it_waits_for_the_call(tmp_path, napping_variant):
    d = small_dashboard(tmp_path, steps=3, isolation="in-process")
    only(d, napping_variant)
    d.run_button.click()
    wait_for(lambda: napping_variant in d.running_label.value, what="the napping cell to show")
    d.cancel_button.click()
    assert "waiting for the running call to return" in d.status.widget.value
    wait_for(lambda: "waiting for the call to return" in d.running_label.value or not d.controller.running, 10,
             "the running line to say it waits")
    finish(d)
    assert d.controller.outcome.interrupted and "cancelled" in d.status.widget.value


def test_exports_carry_the_baseline_chosen_here(tmp_path):
    if not all_backends()["numba"].probe().available:
        pytest.skip("numba is not available here")
    d = small_dashboard(tmp_path, steps=1)
    assert d.plot.baseline.options == () and d.plot.baseline.disabled  # nothing measured yet
    d.backends.checkboxes["numba"].value = True
    only(d, "numpy", "numba")
    d.run_button.click()
    finish(d)
    assert set(d.plot.baseline.options) == {"numpy @ numpy", "numba @ numba"}  # measured series only
    assert d.plot.baseline.value == "numpy @ numpy"  # the library variant by default
    d.plot.baseline.value = "numba @ numba"
    d.exports.buttons["md"].click()
    assert "Speed-ups over one reference for the whole report: numba @ numba" in d.exports.last_path.read_text()
    d.plot.baseline.value = "numpy @ numpy"
    d.exports.buttons["md"].click()
    assert "Speed-ups over one reference for the whole report: numpy @ numpy" in d.exports.last_path.read_text()


def test_baselines_and_metrics_offer_only_what_was_measured(tmp_path, broken_variant):
    d = small_dashboard(tmp_path, steps=1)
    only(d, "numpy", broken_variant)
    d.run_button.click()
    finish(d)
    assert d.plot.baseline.options == ("numpy @ numpy",)  # the broken variant never measured
    metrics = [m for _, m in d.plot.metric.options]
    assert "speedup" not in metrics  # one measured series: nothing to compare
    assert "median_s" in metrics and "gbps" in metrics


def test_pct_peak_uses_the_column_each_kernel_has():
    from workbench.report.sample_data import synthetic_results
    from workbench.ui.views import PlotView, pct_peak_column

    df = synthetic_results()
    ok = df[df["status"] == "ok"]
    gemm = ok[ok["kernel"] == "gemm"] if "gemm" in set(ok["kernel"]) else ok.assign(bound="compute-bound")
    mem = ok[ok["bound"] != "compute-bound"]
    assert pct_peak_column(mem.assign(pct_peak_bw=50.0, pct_peak_flops=None)) == "pct_peak_bw"
    assert pct_peak_column(gemm.assign(pct_peak_bw=None, pct_peak_flops=40.0)) == "pct_peak_flops"
    assert pct_peak_column(mem.assign(pct_peak_bw=None, pct_peak_flops=None)) is None
    view = PlotView()
    view.update(gemm.assign(pct_peak_bw=None, pct_peak_flops=40.0))
    assert "pct_peak" in [m for _, m in view.metric.options]
    view.metric.value = "pct_peak"
    assert "image/png" in view.output.outputs[0]["data"]
    view.update(mem.assign(pct_peak_bw=None, pct_peak_flops=None))  # no value: the option goes
    assert "pct_peak" not in [m for _, m in view.metric.options] and view.metric.value == "median_s"


def test_plots_use_the_report_styles_and_hi_dpi_images():
    import base64
    import struct

    from workbench.report.plots import series_key, styles_for
    from workbench.report.sample_data import synthetic_results
    from workbench.ui.views import PlotView

    df = synthetic_results()
    df = df[df["kernel"] == df["kernel"].iloc[0]]
    styles = styles_for(df)
    view = PlotView()
    view.update(df, styles, {})
    fig = view.figure(df)
    colors = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines()}
    for (v, b), _ in df[df["status"] == "ok"].groupby(["variant", "backend"]):
        key = series_key(v, b)
        assert colors.get(key) == styles[key].color, (key, colors)
    out = view.output.outputs[0]
    png = base64.b64decode(out["data"]["image/png"])
    width_px = struct.unpack(">I", png[16:20])[0]
    assert width_px >= 2 * out["metadata"]["image/png"]["width"] - 2  # drawn at 2x the size it is shown


def test_default_sizes_come_from_the_quick_list(tmp_path):
    d = Dashboard(store=str(tmp_path / "r.sqlite"), backends=["numpy"], kernel="softmax")
    spec = catalog.get_kernel("softmax")
    assert d.sizes.suite.value == "quick" and d.sizes.sizes() == [dict(p) for p in spec.sizes["quick"]]
    quick = spec.sizes["quick"]
    assert d.sizes.axis_min["rows"].value == min(p["rows"] for p in quick) > 1
    assert d.sizes.axis_max["cols"].value == max(p["cols"] for p in quick)


def test_the_mode_box_alone_decides_whether_compiled_variants_run(tmp_path, compiled_variant):
    d = small_dashboard(tmp_path, steps=1)
    assert not d.options.modes["compiled"].value
    cb = d.kernels.checkboxes[compiled_variant]
    assert cb.disabled and not cb.value and compiled_variant not in d.kernels.selected_variants
    assert compiled_variant not in d.sweep_spec().variants
    d.options.modes["compiled"].value = True
    cb = d.kernels.checkboxes[compiled_variant]
    assert not cb.disabled and cb.value and compiled_variant in d.sweep_spec().variants
    d.options.modes["compiled"].value = False
    assert d.kernels.checkboxes[compiled_variant].disabled
    assert compiled_variant not in d.sweep_spec().variants


def test_unavailable_backends_fold_into_one_line_naming_each_with_its_reason(tmp_path):
    from workbench.ui.controls import device_label

    d = small_dashboard(tmp_path)
    known = all_backends()
    probes = {n: b.probe() for n, b in known.items()}
    missing = [n for n, p in probes.items() if not p.available]
    shown = [c for c in d.backends.widget.children if hasattr(c, "children")]  # one row per checkbox shown
    assert sorted(row.children[0].description for row in shown) == sorted(n for n in known if n not in missing)
    folded = [c for c in d.backends.widget.children if "wb-backends-unavailable" in c._dom_classes]
    if not missing:
        assert folded == []
        return
    assert len(folded) == 1
    text = folded[0].value
    assert f"{len(missing)} unavailable: " in text
    for name in missing:
        assert f"<b>{name}</b>" in text and str(probes[name].reason)[:40] in text.replace("&#x27;", "'")
    for name, b in known.items():  # a CPU is called a CPU, whatever runtime emulates a device on it
        if probes[name].available and b.device_info().kind == "cpu":
            short, full = device_label(b)
            assert short.startswith("CPU") and b.device_info().name in full, (name, short, full)
            if b.runtime in ("opencl", "wgpu") or name == "triton-interp":
                assert short in ("CPU (PoCL)", "CPU (lavapipe)", "CPU (Triton interpreter)"), (name, short)


def test_progress_moves_with_every_cell_of_every_round(tmp_path):
    d = small_dashboard(tmp_path)
    d._real_cells, d._rounds = 3, 3
    seen = []
    for rnd in (1, 2, 3):
        for key in ("a", "b", "c"):
            d._on_row({"cell_key": key, "status": "ok", "rounds": rnd, "variant": "v", "backend": "numpy"}, 0, 0)
            seen.append((d.progress.value, d.progress_label.value.split(" · ")[0]))
    assert [v for v, _ in seen] == [1, 2, 3] * 3
    assert seen[4][1] == "2/3 cells of round 2/3"
    d._on_row({"cell_key": "z", "status": "error", "rounds": 1, "variant": "v", "backend": "numpy"}, 0, 0)
    assert d.progress.value == 3  # a failed cell is done in every round; the bar never passes its end


def test_cancel_button_is_orange_only_while_it_can_be_pressed_and_the_running_line_is_plain_text(tmp_path):
    d = small_dashboard(tmp_path, steps=12)
    assert d.cancel_button.disabled and d.cancel_button.button_style == ""
    d.run_button.click()
    assert not d.cancel_button.disabled and d.cancel_button.button_style == "warning"
    wait_for(lambda: d.rows, what="a cell to finish")
    assert "⏱" not in d.running_label.value  # the stopwatch glyph rendered as a box in Chromium
    d.cancel_button.click()
    assert d.cancel_button.disabled and d.cancel_button.button_style == ""
    finish(d)
    assert d.cancel_button.button_style == ""
    # after Cancel, the bar, its label and the status count the same cells
    done = len(d.rows)
    assert d.progress.value == done and d.progress_label.value.startswith(f"{done}/{d._real_cells} cells")
    assert f"({done}/{d._real_cells} cells with a result)" in d.status.widget.value


def test_results_table_says_once_what_every_row_shares():
    """One kernel on one backend in one dtype: kernel, backend and dtype are said once above the table, so the
    time, rates and % of peak are the first columns a laptop's results pane shows; they stay columns where
    rows differ."""
    from workbench.report.sample_data import synthetic_results
    from workbench.ui.views import results_html

    df = synthetic_results()
    one = df[(df["kernel"] == "saxpy") & (df["backend"] == "numpy")]
    head = results_html(one).split("<thead>")[1].split("</thead>")[0]
    assert "<th>kernel</th>" not in head and "<th>backend</th>" not in head and "<th>dtype</th>" not in head
    assert "<th>median ± IQR</th>" in head and "<th>variant</th>" in head
    assert "every row: kernel <b>saxpy</b> · backend <b>numpy</b> · dtype <b>float32</b>" in results_html(one)
    mixed = results_html(df).split("<thead>")[1]
    assert "<th>kernel</th>" in mixed and "<th>backend</th>" in mixed


def test_speedup_stays_offered_through_a_run_of_two_series():
    """Issue 39: the "speed-up" button vanished when a run's first cell finished (one series measured) and came
    back with the second; a run that will measure two series offers it throughout and says what it waits for."""
    from workbench.report.sample_data import synthetic_results
    from workbench.ui.views import PlotView, measured_series

    df = synthetic_results()
    ok = df[df["status"] == "ok"]
    first = ok[[k == measured_series(ok)[0] for k in measured_series_keys(ok)]]
    view = PlotView()
    view.update(first)
    assert "speedup" not in [m for _, m in view.metric.options]  # no run: one series, nothing to compare
    view.expected_series = 2
    view.update(first)
    assert "speedup" in [m for _, m in view.metric.options]
    view.metric.value = "speedup"
    view.redraw()  # the dashboard redraws on the toggle's change
    assert "second series" in str(view.output.outputs[0])
    view.update(ok)
    assert view.metric.value == "speedup" and "image/png" in view.output.outputs[0]["data"]


def measured_series_keys(df):
    from workbench.report.styles import series_key

    return [series_key(v, b) for v, b in zip(df["variant"], df["backend"], strict=True)]

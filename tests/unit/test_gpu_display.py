"""Issue 37, point 1 as users see it: every table that shows a time says which time it is (its timing mode):
the report's per-kernel tables (one line when all cells share a mode, else per column), its all-rows table,
``timeit`` and ``%wb_timeit``, the dashboard's results table and bench's terminal summary; an import refuses a
timing mode that is none of host/launch/kernel/graph."""

from __future__ import annotations

import json

import pytest
from fakegpu import FakeBackend, FakeDevice

from workbench.report.sample_data import synthetic_results
from workbench.report.tables import pivot, pivot_markdown


def _saxpy(modes: dict[str, str]) -> object:
    """The sample run's saxpy rows, each backend's rows in the given timing mode."""
    df = synthetic_results("run-a", with_failures=False)
    df = df[df["kernel"] == "saxpy"].copy()
    df["timing_mode"] = [modes.get(b) for b in df["backend"]]
    return df


def test_a_kernel_table_says_its_one_timing_mode_once():
    df = _saxpy({"numpy": "kernel", "numba": "kernel"})
    p = pivot(df)
    assert p["timing_mode"] == "kernel" and set(p["modes"]) == {"kernel"}
    md = pivot_markdown(p)
    assert "(median per call, timing mode kernel)" in md and "[kernel]" not in md


def test_a_kernel_table_of_two_timing_modes_names_each_columns():
    df = _saxpy({"numpy": "host", "numba": "kernel"})
    p = pivot(df)
    assert p["timing_mode"] == "" and sorted(p["modes"]) == ["host", "kernel"]
    md = pivot_markdown(p)
    head = md.splitlines()[0]
    assert "numpy @ numpy \\[host\\]" in head and "@ numba \\[kernel\\]" in head  # [...] escaped in Markdown
    assert "timing mode in \\[brackets\\] per column" in md
    old = pivot(df.drop(columns=["timing_mode"]))  # rows stored before modes were recorded: nothing said
    assert old["timing_mode"] == "" and not any(old["modes"]) and "timing mode" not in pivot_markdown(old)


def test_reports_show_the_timing_mode_in_kernel_tables_and_the_all_rows_table(tmp_path):
    from workbench.report import write_report
    from workbench.report.summary import summary_table

    df = _saxpy({"numpy": "host", "numba": "kernel"})
    table = summary_table(df)
    assert set(table["timing mode"]) == {"host", "kernel"}
    html = write_report(df, None, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "[kernel]" in html and "timing mode in [brackets] per column" in html
    assert "<th>timing mode</th>" in html and "<td>kernel</td>" in html
    one = write_report(_saxpy({"numpy": "graph", "numba": "graph"}), None, tmp_path / "o.html").read_text("utf-8")
    assert "timing mode graph." in one and "[graph]" not in one
    md = write_report(df, None, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "| timing mode |" in md and "\\[kernel\\]" in md


def test_the_dashboards_results_table_names_the_timing_mode():
    pytest.importorskip("ipywidgets", reason="the dashboard needs ipywidgets (the notebook extra); the unit tier "
                                             "runs without it")
    from workbench.ui.views import results_html

    shared = results_html(_saxpy({"numpy": "kernel", "numba": "kernel"}))
    assert "timing mode <b>kernel</b>" in shared  # said once above the table
    mixed = results_html(_saxpy({"numpy": "host", "numba": "kernel"}))
    assert "<th>timing mode</th>" in mixed and "<td>host</td>" in mixed and "<td>kernel</td>" in mixed


def test_bench_summary_has_a_timing_mode_column_once_a_row_was_timed_on_a_device():
    from workbench.cli.cmd_bench import format_summary

    row = {"kernel": "saxpy", "variant": "v", "backend": "b", "dtype": "float32", "size": 8, "status": "ok",
           "median_s": 1e-3}
    assert "timing mode" not in format_summary([{**row, "timing_mode": "host"}])
    text = format_summary([{**row, "timing_mode": "host"}, {**row, "backend": "g", "timing_mode": "kernel"}])
    assert "timing mode" in text.splitlines()[0] and "kernel" in text.splitlines()[3]


def test_timeit_names_the_timing_mode_it_got(fresh_registry, monkeypatch):
    import fakegpu
    import numpy as np

    import workbench
    from workbench.backends import register_backend, register_runtime, registry
    from workbench.magics import measurement_line

    cpu = workbench.timeit(np.add, np.ones(64), 1.0, budget_s=0.01, rounds=1)
    assert cpu.timing_mode == "host" and "timing mode host" in str(cpu) and "timing mode host" in \
        measurement_line(cpu)
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    register_runtime(fakegpu.DECLARATION)
    dev = FakeDevice(work_s=20e-6, launch_s=200e-6)
    register_backend(FakeBackend(dev))
    gpu = workbench.timeit(dev.launch, backend=fakegpu.NAME, budget_s=0.02, rounds=1)
    assert gpu.timing_mode == "kernel" and "GPU default" in gpu.timing_note and "timing mode kernel" in str(gpu)
    assert gpu.median_s < 100e-6  # the kernel, not its 200 us launch
    launch = workbench.timeit(dev.launch, backend=fakegpu.NAME, budget_s=0.02, rounds=1, timing_mode="launch")
    assert launch.timing_mode == "launch" and launch.median_s >= 200e-6
    with pytest.raises(ValueError, match="valid timing modes: host, launch, kernel, graph"):
        workbench.timeit(dev.launch, backend=fakegpu.NAME, timing_mode="wall")


def _export(mode: object) -> dict:
    row = {"run_id": "r1", "cell_key": "k", "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
           "dtype": "float32", "params": json.dumps({"n": 8}), "size": 8, "status": "ok", "median_s": 1e-3,
           "samples_s": json.dumps([1e-3]), "env_id": "envA", "timing_mode": mode}
    return {"format": "workbench-results", "version": 1,
            "runs": [{"run_id": "r1", "created_at": "2026-01-01T00:00:00.000Z", "status": "finished",
                      "env_id": "envA"}],
            "environments": [{"env_id": "envA", "record": {"host": "A"}}], "results": [row], "peaks": []}


@pytest.mark.parametrize("mode", ["host", "launch", "kernel", "graph", None])
def test_an_import_accepts_the_four_timing_modes(mode):
    from workbench.store.import_schema import validate_export

    assert validate_export(_export(mode), "x.json")["results"][0]["timing_mode"] == mode


@pytest.mark.parametrize("mode", ["wall", "", "Kernel", 3, ["kernel"]])
def test_an_import_refuses_any_other_timing_mode(mode):
    from workbench.store.import_schema import validate_export
    from workbench.store.plain_rows import plain_row, plain_rows

    doc = _export(mode)
    assert not plain_row(doc["results"][0]) and not plain_rows(doc["results"] * 3)  # the fast path too
    with pytest.raises(ValueError, match=r"results\[0\]\.timing_mode"):
        validate_export(doc, "x.json")

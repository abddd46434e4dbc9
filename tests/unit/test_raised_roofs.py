"""A probed FLOP roof that a correct row of the run went past is raised to that row's rate, and the run's rows
scored against it are scored again (CI, on a loaded machine: numpy GEMM rows at 101-102% of a 116 GFLOP/s probe)."""

from __future__ import annotations

import json

import pytest

from workbench.report.data import gather
from workbench.report.roof_check import check_roofs
from workbench.roofs.model import AUTO_METHOD_PREFIX, AUTO_PROBE, MEASURED
from workbench.roofs.raised import raise_probed_roofs
from workbench.roofs.throughput import FLOPS, rates
from workbench.store.database import Store

PROBE = 116.0


class _Ceilings(dict):
    """What a sweep passes ``rates``: values with their sources."""

    def __init__(self, values, sources):
        super().__init__(values)
        self.sources = sources


def _row(run_id: str, key: str, gflops: float, source: str = AUTO_PROBE, dtype: str = "float32",
         status: str = "ok", kernel: str = "gemm") -> dict:
    flops = 2.0 * 512**3
    seconds = flops / gflops / 1e9
    peaks = _Ceilings({(FLOPS, dtype): PROBE}, {(FLOPS, dtype): source})
    row = {"run_id": run_id, "cell_key": key, "kernel": kernel, "variant": key, "backend": "numpy", "dtype": dtype,
           "params": json.dumps({"n": 512}), "status": status, "median_s": seconds, "env_id": "env0",
           "device": "cpu0", "bound": "compute-bound", "size_label": "n=512"}
    row.update(rates(flops, 3 * 4 * 512**2, seconds, dtype, peaks, bound="compute-bound"))
    return row


@pytest.fixture
def store(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    st.add_environment("env0", {"host": {"cpu": "test"}})
    for backend in ("numpy", "torch-cpu"):  # every CPU runtime holds the same copy of the device's roofs
        st.set_peak("env0", backend, FLOPS, "float32", PROBE, "GFLOP/s", f"{AUTO_METHOD_PREFIX}: BLAS GEMM, best of 5")
    return st


def test_a_probe_a_correct_row_beat_is_raised_and_the_rows_scored_again(store):
    run = store.new_run(env_id="env0")
    for key, rate in (("a", 118.3), ("b", 117.0), ("c", 80.0)):
        store.record(_row(run, key, rate))
    assert "GFLOP/s ceiling" in store.rows([run])[0]["peak_note"]
    raised = raise_probed_roofs(store, run)
    assert [(r.old, round(r.new, 1)) for r in raised] == [(PROBE, 118.3)]
    assert "gemm/a" in raised[0].by
    rows = {r["cell_key"]: r for r in store.rows([run])}
    assert rows["a"]["pct_peak_flops"] == pytest.approx(100.0)
    assert rows["b"]["pct_peak_flops"] == pytest.approx(100 * 117 / 118.3)
    assert rows["c"]["pct_peak_flops"] == pytest.approx(100 * 80 / 118.3)
    assert all(r["ceiling_gflops"] == pytest.approx(118.3) for r in rows.values())
    assert not any("GFLOP/s ceiling" in (r["peak_note"] or "") for r in rows.values())
    for backend in ("numpy", "torch-cpu"):
        (peak,) = store.peak_records("env0", backend)
        assert peak["value"] == pytest.approx(118.3)
        assert peak["method"].startswith(AUTO_METHOD_PREFIX) and "raised from 116 (automatic probe)" in peak["method"]
    data = gather(store)
    assert check_roofs(data.df, data.peaks, data.environments).passed


def test_nothing_is_raised_by_an_implausible_row_a_wrong_one_or_a_measured_roof(store):
    run = store.new_run(env_id="env0")
    store.record(_row(run, "far", PROBE * 1.6))  # past the margin: implausible, never evidence
    store.record(_row(run, "wrong", 120.0, status="incorrect"))
    store.record(_row(run, "peaks", 120.0, source=MEASURED, dtype="float64"))  # `workbench peaks`: the row's note
    store.record(_row(run, "memory", 120.0, kernel="saxpy") | {"bound": "memory-bound", "intensity": 0.1})
    assert raise_probed_roofs(store, run) == []
    assert store.peak_records("env0", "numpy")[0]["value"] == PROBE


def test_a_run_with_no_row_past_a_roof_reads_no_rows(store, monkeypatch):
    run = store.new_run(env_id="env0")
    store.record(_row(run, "a", 90.0))
    monkeypatch.setattr(store, "rows", lambda *a, **k: pytest.fail("read the rows"))
    assert raise_probed_roofs(store, run) == []

"""Ceilings behind % of peak: the automatic probe, where each ceiling came from, and notes above 100%."""

from __future__ import annotations

import pytest

from workbench.backends import registry as backend_registry
from workbench.roofs import peaks
from workbench.roofs.throughput import (
    AUTO_PROBE,
    BANDWIDTH,
    FLOPS,
    MEASURED,
    PUBLISHED,
    Ceilings,
    peak_note,
    rates,
)
from workbench.store.database import Store

MiB = 2**20


def test_rates_name_measured_ceilings_and_their_source():
    c = Ceilings({(BANDWIDTH, "float32"): 20.0, (FLOPS, "float32"): 100.0},
                 {(BANDWIDTH, "float32"): AUTO_PROBE, (FLOPS, "float32"): AUTO_PROBE}, llc_bytes=32 * MiB)
    r = rates(1e9, 1e9, 0.1, "float32", c)  # 10 GB/s, 10 GFLOP/s
    assert r["pct_peak_bw"] == pytest.approx(50) and r["pct_peak_flops"] == pytest.approx(10)
    assert (r["ceiling_gbps"], r["ceiling_gflops"], r["ceiling_source"]) == (20.0, 100.0, AUTO_PROBE)
    assert r["peak_note"] is None
    plain = rates(1e9, 1e9, 0.1, "float32", {(BANDWIDTH, "float32"): 20.0})
    assert plain["ceiling_source"] == MEASURED and plain["ceiling_gflops"] is None


def test_published_figures_stand_in_where_nothing_was_measured():
    r = rates(1e9, 1e9, 0.1, "float32", None, {FLOPS: 50.0, BANDWIDTH: 40.0})
    assert (r["ceiling_gbps"], r["ceiling_gflops"], r["ceiling_source"]) == (40.0, 50.0, PUBLISHED)
    assert r["pct_peak_bw"] == pytest.approx(25) and r["pct_peak_flops"] == pytest.approx(20)
    mixed = rates(1e9, 1e9, 0.1, "float32", Ceilings({(BANDWIDTH, "float32"): 20.0}), {FLOPS: 50.0})
    assert mixed["ceiling_source"] == f"{MEASURED} for GB/s, {PUBLISHED} for GFLOP/s"
    none = rates(1e9, 1e9, 0.1, "float32")
    assert none["pct_peak_bw"] is None and none["ceiling_source"] is None and none["peak_note"] is None


def test_above_100_percent_is_explained_by_the_cache_or_the_ceiling():
    c = Ceilings({(BANDWIDTH, "float32"): 10.0}, {(BANDWIDTH, "float32"): MEASURED}, llc_bytes=32 * MiB)
    small = rates(0.0, 3.1 * MiB, 3.1 * MiB / 30e9, "float32", c)  # 30 GB/s from a 3.1 MiB working set
    assert small["pct_peak_bw"] == pytest.approx(30e9 / 10e9 * 100 * 1.0, rel=0.05)
    assert "working set 3.1 MiB fits in the 32 MiB last-level cache" in small["peak_note"]
    big = rates(0.0, 256 * MiB, 256 * MiB / 30e9, "float32", c)
    assert "exceeds the 32 MiB last-level cache" in big["peak_note"] and "workbench peaks" in big["peak_note"]
    assert "published figure" in peak_note(None, 150.0, 1e6, None, None, PUBLISHED)
    assert "automatic probe" in peak_note(None, 150.0, 1e6, None, None, AUTO_PROBE)
    assert peak_note(99.0, 100.0, 1e6, 1e9) is None


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    path = tmp_path / "ceilings.json"
    monkeypatch.setenv(peaks.ENV_CEILINGS_CACHE, str(path))
    monkeypatch.delenv(peaks.ENV_AUTO_PEAKS, raising=False)
    monkeypatch.setattr(peaks, "_probed", {})
    return path


def test_workbench_peaks_win_over_the_automatic_probe(tmp_path, cache_file, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    store.set_peak("env", "numpy", BANDWIDTH, "float32", 12.0, "GB/s", "saxpy/numpy (STREAM triad)")
    monkeypatch.setattr(peaks, "probe_backend", lambda *a: pytest.fail("probed although peaks were stored"))
    c = peaks.ensure_ceilings(store, "env", "numpy")
    assert dict(c) == {(BANDWIDTH, "float32"): 12.0} and c.sources[(BANDWIDTH, "float32")] == MEASURED


def test_the_probe_can_be_turned_off(tmp_path, cache_file, monkeypatch):
    monkeypatch.setenv(peaks.ENV_AUTO_PEAKS, "0")
    monkeypatch.setattr(peaks, "probe_backend", lambda *a: pytest.fail("probed although turned off"))
    assert not peaks.ensure_ceilings(Store(tmp_path / "s.sqlite"), "env", "numpy")


def test_with_the_probe_off_an_earlier_probe_is_still_used(tmp_path, cache_file, monkeypatch):
    """Issue 39: quick tutorials turn the probe off, and showed "% peak" empty although this environment had
    been probed; an earlier probe costs nothing to read."""
    key = peaks._probe_key(backend_registry.get("numpy"))
    kept = [peaks.Peak("numpy", BANDWIDTH, "float32", 40.0, "GB/s", "automatic probe: saxpy", {})]
    peaks._remember_probe("env", key, kept)
    monkeypatch.setattr(peaks, "_probed", {})  # a new process: only the cache file has it
    monkeypatch.setenv(peaks.ENV_AUTO_PEAKS, "0")
    monkeypatch.setattr(peaks, "probe_backend", lambda *a: pytest.fail("probed although turned off"))
    store = Store(tmp_path / "s.sqlite")
    assert peaks.ensure_ceilings(store, "env", "numpy")[(BANDWIDTH, "float32")] == 40.0
    assert len(store.peaks("env", "numpy")) == 1


def test_a_device_without_roofs_says_why(monkeypatch):
    from workbench.roofs.model import RoofSet

    monkeypatch.setenv(peaks.ENV_AUTO_PEAKS, "0")
    off = RoofSet("cpu").for_row("memory-bound", "float32").missing
    assert "WORKBENCH_AUTO_PEAKS=0" in off and "workbench peaks" in off
    monkeypatch.setenv(peaks.ENV_AUTO_PEAKS, "1")
    assert "kept none" in RoofSet("cpu").for_row("memory-bound", "float32").missing


def test_a_failed_probe_does_not_stop_anything(tmp_path, cache_file, monkeypatch):
    def boom(*a):
        raise RuntimeError("probe broke")

    monkeypatch.setattr(peaks, "probe_backend", boom)
    assert not peaks.ensure_ceilings(Store(tmp_path / "s.sqlite"), "env", "numpy")


def _accept_unsteady_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe refuses a roof whose repeats disagree (a busy machine): right, but not what these tests check
    (the plumbing), and a CI running three test jobs on two cores made it refuse there (best 17.4, median 9 GB/s)."""
    from workbench.roofs import probe as roof_probe

    monkeypatch.setattr(roof_probe, "UNSTABLE_SPREAD", float("inf"))
    # likewise a roof far below the one it must exceed (DRAM under the CI's load: its own test, test_roofs.py)
    monkeypatch.setattr(roof_probe, "FAR_BELOW", 0.0)


def test_automatic_probe_for_real_then_reused(tmp_path, cache_file, monkeypatch):
    """The real probe on numpy: a few seconds, stored as 'automatic probe', kept for the next store."""
    _accept_unsteady_repeats(monkeypatch)
    store = Store(tmp_path / "a.sqlite")
    c = peaks.ensure_ceilings(store, "env-probe", "numpy")
    assert c.get((BANDWIDTH, "float32"), 0) > 0 and c.get((FLOPS, "float32"), 0) > 0
    assert set(c.sources.values()) == {AUTO_PROBE} and c.llc_bytes
    stored = store.peaks("env-probe", "numpy")
    assert len(stored) >= 2 and stored["method"].str.startswith("automatic probe").all()
    monkeypatch.setattr(peaks, "probe_backend", lambda *a: pytest.fail("probed twice in one environment"))
    again = peaks.ensure_ceilings(store, "env-probe", "numpy")
    assert dict(again) == dict(c)
    fresh = Store(tmp_path / "b.sqlite")  # a new store in the same environment copies the probe
    assert dict(peaks.ensure_ceilings(fresh, "env-probe", "numpy")) == dict(c)
    # a later `workbench peaks` replaces the probe's rows, and wins
    fresh.set_peak("env-probe", "numpy", BANDWIDTH, "float32", 99.0, "GB/s", "saxpy/numpy (STREAM triad)")
    after = peaks.ensure_ceilings(fresh, "env-probe", "numpy")
    assert after[(BANDWIDTH, "float32")] == 99.0 and after.sources[(BANDWIDTH, "float32")] == MEASURED
    assert after.sources[(FLOPS, "float32")] == AUTO_PROBE


def test_a_sweep_probes_once_and_every_row_names_its_ceiling(tmp_path, cache_file, monkeypatch):
    from workbench.sweep.driver import SweepSpec, run_sweep

    calls = []

    def fake_probe(backend, worker):
        calls.append(backend.name)
        # a tiny DRAM ceiling under an L1 roof no call reaches (the probe measures both): above the DRAM
        # ceiling, never implausible
        return [peaks.Peak(backend.name, BANDWIDTH, "float32", 1e-3, "GB/s", "automatic probe: fake", {}),
                peaks.Peak(backend.name, "l1_bandwidth_gbps", "float32", 1e6, "GB/s", "automatic probe: fake", {}),
                peaks.Peak(backend.name, FLOPS, "float32", 1e3, "GFLOP/s", "automatic probe: fake", {})]

    monkeypatch.setattr(peaks, "probe_backend", fake_probe)
    monkeypatch.setattr("workbench.sweep.driver.current_environment", lambda: ("env-sweep", {"host": "test"}))
    store = Store(tmp_path / "s.sqlite")
    spec = SweepSpec(kernels=["saxpy"], variants=["numpy"], backends=["numpy"], sizes=[(4096,), (8192,)],
                     warmup_s=0.001, budget_s=0.01, min_samples=3, n_inputs=1)
    rows = run_sweep(spec, store=store, progress=False).rows
    run_sweep(spec, store=store, progress=False)
    assert calls == ["numpy"]
    for row in rows:
        assert row["status"] == "ok" and row["ceiling_source"] == AUTO_PROBE
        assert row["ceiling_gbps"] == 1e-3 and row["pct_peak_bw"] > 100
        assert "fits in the" in row["peak_note"]  # a few KiB: in cache, above a (tiny) DRAM ceiling


def test_a_note_follows_percentages_rescaled_by_rounds():
    from workbench.roofs.ceilings import refresh_peak_note

    c = Ceilings({(BANDWIDTH, "float32"): 10.0}, {(BANDWIDTH, "float32"): AUTO_PROBE}, llc_bytes=32 * MiB)
    row = rates(0.0, 3 * MiB, 3 * MiB / 32e9, "float32", c)
    assert row["peak_note"].startswith("320% of")
    row["pct_peak_bw"] = 270.0  # merging rounds moved the headline median
    assert refresh_peak_note(row)["peak_note"].startswith("270% of") and "32 MiB last-level cache" in row["peak_note"]
    row["pct_peak_bw"] = 90.0
    assert refresh_peak_note(row)["peak_note"] is None


def test_roofs_cached_by_an_older_probe_are_measured_again(tmp_path, cache_file, monkeypatch):
    """A cache entry without this probe's version (an early probe's low GEMM roof) is not reused: the roof is
    probed again and cached with the version; the next store reuses that."""
    import json

    key = peaks._probe_key(backend_registry.get("numpy"))
    old = [{"backend": "numpy", "metric": FLOPS, "dtype": "float32", "value": 224.0, "unit": "GFLOP/s",
            "method": "automatic probe: BLAS GEMM (numpy.matmul) 1280x1280x1280 float32, best of 7", "details": {}}]
    cache_file.write_text(json.dumps({"env": {key: old}}))
    fresh = [peaks.Peak("numpy", FLOPS, "float32", 298.0, "GFLOP/s", "automatic probe: BLAS GEMM (new)", {})]
    calls = []
    monkeypatch.setattr(peaks, "probe_backend", lambda *a: calls.append(1) or fresh)
    c = peaks.ensure_ceilings(Store(tmp_path / "a.sqlite"), "env", "numpy")
    assert calls == [1] and c[(FLOPS, "float32")] == 298.0
    kept = json.loads(cache_file.read_text())["env"][key]
    assert kept["probe_version"] == peaks.PROBE_VERSION and kept["peaks"][0]["value"] == 298.0
    monkeypatch.setattr(peaks, "_probed", {})
    assert peaks.ensure_ceilings(Store(tmp_path / "b.sqlite"), "env", "numpy")[(FLOPS, "float32")] == 298.0
    assert calls == [1]  # the versioned entry is reused


def test_a_gpus_automatic_bandwidth_roof_is_its_runtimes_fastest_saxpy():
    """On an H200, CuPy's own saxpy moved 1.07 TB/s and its portable kernel 3.06: the roof is the device's, so
    the probe tries each saxpy of the runtime and keeps the fastest (CuPy's rows read 105% of the slow one)."""
    from types import SimpleNamespace

    from workbench.backends.base import DeviceInfo

    info = DeviceInfo(name="Fake GPU", vendor="x", kind="gpu", total_memory_bytes=2**34,
                      last_level_cache_bytes=50 * 2**20)
    gpu = SimpleNamespace(name="cupy", runtime="cupy", device_info=lambda: info,
                          capabilities=lambda: SimpleNamespace(dtypes=("float32", "float64")))
    seconds = {"cupy": 1e-3, "portable": 0.35e-3}
    asked = []

    class FakeWorker:
        def execute(self, cell, config, timeout_s=None):
            asked.append((cell.kernel, cell.variant))
            s = seconds.get(cell.variant, 1e-3) if cell.kernel == "saxpy" else 1e-3
            n = dict(cell.params).get("n", 256)
            return {"status": "ok", "min_s": s, "bytes": 12 * n, "gbps": 12 * n / s / 1e9, "n_samples": 5,
                    "flops": 2 * 256**3, "gflops": 1.0, "size_label": "m=256", "params": "{}", "message": "",
                    "other_cpu_share": 0.0}

    found = peaks.probe_backend(gpu, FakeWorker())
    bw = [p for p in found if p.metric == "bandwidth_gbps"]
    assert ("saxpy", "cupy") in asked and ("saxpy", "portable") in asked
    assert len(bw) == 1 and bw[0].details["variant"] == "portable"
    assert bw[0].value == pytest.approx(bw[0].details["n"] * 12 / 0.35e-3 / 1e9)


def test_a_roof_whose_repeats_disagree_is_measured_again_then_refused():
    """The probe's own guard (which the real-probe tests above set aside): repeats spreading past
    UNSTABLE_SPREAD are measured again, and refused when they still disagree, naming a busy machine."""
    from workbench.roofs import probe as roof_probe
    from workbench.roofs.model import RoofKind

    figures = iter([roof_probe.Figure(20.0, 9.0), roof_probe.Figure(18.0, 17.0)])
    steady = roof_probe._measured("cpu", RoofKind.DRAM, lambda: (next(figures), "triad"))
    assert steady.value == 18.0 and "measured twice" in steady.method
    unsteady = roof_probe._measured("cpu", RoofKind.DRAM, lambda: (roof_probe.Figure(17.4, 8.99), "triad"))
    assert unsteady.value is None and "unstable across" in unsteady.missing and "machine busy" in unsteady.missing


def test_the_probe_process_refuses_by_the_callers_limits(monkeypatch):
    """Issue 38: the tests set the refusals aside in their own process while the probe ran in another, which
    refused under load ("unstable across 5 repeats") all the same. The probe process is handed the limits."""
    import json
    import subprocess

    from workbench.roofs import probe as roof_probe

    seen = []

    def fake_run(argv, **kw):
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, json.dumps([]), "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(roof_probe, "UNSTABLE_SPREAD", float("inf"))
    monkeypatch.setattr(roof_probe, "FAR_BELOW", 0.0)
    roof_probe.probe_cpu("CPU test")
    assert seen and seen[0][-3:] == ["CPU test", "inf", "0.0"]
    assert roof_probe.refusal_limits() == (float("inf"), 0.0)


def test_refused_roofs_leave_percent_of_peak_empty_never_an_error(tmp_path, cache_file, monkeypatch):
    """A roof the probe refused (a busy machine) is None: measured peaks, a sweep's rows and their notes carry
    no percentage, and nothing raises (issue 38: a TypeError on a None roof)."""
    from workbench.roofs.model import CACHE_LEVELS, Roof, RoofKind, RoofSet
    from workbench.sweep.driver import SweepSpec, run_sweep

    def refused(device):
        why = "probe refused: unstable across 5 repeats twice: machine busy?"
        return RoofSet(device, [Roof(device, k, None, AUTO_PROBE, "automatic probe: x", missing=why)
                                for k in (RoofKind.DRAM, *CACHE_LEVELS)]
                       + [Roof(device, RoofKind.FLOPS, None, AUTO_PROBE, "automatic probe: y", dt, missing=why)
                          for dt in ("float32", "float64")])

    monkeypatch.setattr(peaks, "_cpu_probed", {})
    monkeypatch.setattr(peaks, "probe_cpu", refused)
    store = Store(tmp_path / "s.sqlite")
    found = peaks.measure_peaks(["numpy"], store)
    assert found and all(p.value is None and "probe refused" in p.method for p in found) and store.peaks().empty
    spec = SweepSpec(kernels=["saxpy", "gemm"], variants=["numpy"], backends=["numpy"], sizes=None,
                     warmup_s=0.001, budget_s=0.01, min_samples=3, n_inputs=1, isolation="in-process")
    rows = run_sweep(spec, store=store, progress=False).rows
    assert rows and all(r["status"] == "ok" for r in rows)
    for r in rows:  # no measured roof: none, or the datasheet's where the table knows this CPU
        assert r["ceiling_source"] in (None, PUBLISHED) and (r["pct_peak_bw"] is None) == (r["ceiling_gbps"] is None)

"""Issue 37, point 6 on the fake GPU: the quick suite's memory-bound families reach HBM on a GPU (a size past 8x
the L2 the device reports, a stated fallback where it reports none; CPU backends keep their sizes), and a GPU's
roofs are cache-aware (an L2 bandwidth probe beside HBM), so an L2-resident row is scored against L2 and reads no
"% of ceiling" above 100% from being held to the HBM roof."""

from __future__ import annotations

import pytest
from fakegpu import FakeBackend, FakeDevice, FakeMonitor

from workbench.backends.base import DeviceInfo

L2 = 8 * 2**20
HBM_BPS, L2_BPS = 2e12, 6e12


class _Reports(FakeBackend):
    """A fake GPU whose device info says what the test wants of its L2 and memory."""

    def __init__(self, l2: int | None, memory: int | None = None) -> None:
        super().__init__(FakeDevice(l2_bytes=l2 or 0))
        self.memory = memory

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="fake GPU", kind="gpu", last_level_cache_bytes=self.dev.l2_bytes or None,
                          total_memory_bytes=self.memory)


def test_the_hbm_working_set_is_past_8x_the_l2_the_device_reports():
    from workbench.sweep.gpu_sizes import FALLBACK_L2_BYTES, hbm_working_set

    ws = hbm_working_set(_Reports(50 * 2**20))  # an H100's L2
    assert ws.nbytes >= 8 * 50 * 2**20 and ws.nbytes >= 400e6 and ws.l2_bytes == 50 * 2**20
    assert "the 50 MiB L2 fake GPU reports" in ws.note
    unknown = hbm_working_set(_Reports(None))
    assert unknown.nbytes >= 8 * FALLBACK_L2_BYTES and "reports no L2 size" in unknown.note
    small = hbm_working_set(_Reports(50 * 2**20, memory=2**30))
    assert small.nbytes == 2**27 and "capped at an eighth of its 1024 MiB" in small.note


def test_a_gpu_gets_an_hbm_size_for_memory_bound_families_and_a_cpu_keeps_its_sizes():
    from workbench.backends import registry
    from workbench.catalog import registry as catalog
    from workbench.sweep.suites import gpu_where

    gpu = _Reports(L2)
    where = {"sizes": [{"n": 1024}, {"n": 2**20}]}
    for kernel in ("saxpy", "sum", "softmax", "transpose", "gelu_tanh"):
        spec = catalog.kernels()[kernel]
        sizes = gpu_where(spec, gpu, where)["sizes"]
        assert sizes[:2] == where["sizes"] and len(sizes) == 3, kernel
        assert spec.bytes_moved(sizes[-1], 4) >= 8 * L2, kernel
    assert gpu_where(catalog.kernels()["gemm"], gpu, where) is where  # compute-bound: no HBM size
    assert gpu_where(catalog.kernels()["saxpy"], registry.get("numpy"), where) is where


def test_list_suites_says_what_the_gpu_hbm_size_is():
    from workbench.sweep.gpu_sizes import gpu_sizes_note

    assert gpu_sizes_note([]) == ""
    note = gpu_sizes_note([_Reports(L2)])
    assert "fakegpu at a working set of 72 MiB (9x the 8 MiB L2 fake GPU reports)" in note


@pytest.fixture
def bandwidth_gpu(fresh_registry, monkeypatch: pytest.MonkeyPatch):
    """The fake GPU with a saxpy whose kernel time is its bytes at L2 bandwidth when its arrays fit the L2, else
    at HBM bandwidth."""
    import fakegpu
    import numpy as np

    from workbench.backends import register_backend, register_runtime, registry
    from workbench.catalog import variant
    from workbench.catalog.registry import unregister_variant
    from workbench.measure import backend_facts
    from workbench.roofs import peaks

    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    # The probe's 20 s per cell is sized for a real device; this one is simulated on the CPU (inputs of 2x the
    # L2 made, checked and timed in Python), which took over 20 s at load 9 on 2 cores: a hang guard instead.
    monkeypatch.setattr(peaks, "AUTO_TIMEOUT_S", 300.0)
    register_runtime(fakegpu.DECLARATION)
    backend = FakeBackend(FakeDevice(launch_s=0.0, l2_bytes=L2, ramp_s=0.0))
    register_backend(backend)
    monkeypatch.setitem(backend_facts._gpu_monitors, fakegpu.NAME, FakeMonitor(backend.dev))

    def fake_saxpy(ctx):
        alpha = np.dtype(ctx.dtype).type(1.7)

        def run(inputs, outputs):
            np.multiply(inputs["x"], alpha, out=outputs["out"])
            outputs["out"] += inputs["y"]
            nbytes = 3 * outputs["out"].nbytes
            backend.dev.launch(work_s=nbytes / (L2_BPS if nbytes <= L2 else HBM_BPS))
        return run

    variant("saxpy", fakegpu.NAME, fakegpu.NAME, description="saxpy on the fake GPU")(fake_saxpy)
    try:
        yield backend
    finally:
        unregister_variant("saxpy", fakegpu.NAME)


def test_a_gpu_probe_measures_l2_beside_hbm_and_l2_rows_are_scored_against_l2(bandwidth_gpu):
    from workbench.measure.isolation import InProcessExecutor
    from workbench.roofs.model import RoofKind, roof_set_from_table
    from workbench.roofs.peaks import probe_backend
    from workbench.roofs.throughput import Ceilings, rates

    worker = InProcessExecutor()
    try:
        peaks = {p.metric: p for p in probe_backend(bandwidth_gpu, worker)}
    finally:
        worker.close()
    hbm, l2 = peaks["bandwidth_gbps"], peaks[RoofKind.L2.metric]
    assert hbm.value == pytest.approx(HBM_BPS / 1e9, rel=0.15), hbm.method
    assert l2.value == pytest.approx(L2_BPS / 1e9, rel=0.15), l2.method
    assert l2.details["working_set_bytes"] == L2 and "timing mode kernel" in l2.method
    table = [{"metric": p.metric, "dtype": p.dtype, "value": p.value, "method": p.method, "details": p.details}
             for p in peaks.values()]
    ceilings = Ceilings({("bandwidth_gbps", "float32"): hbm.value}, llc_bytes=L2)
    ceilings.roof_set = roof_set_from_table(table, "fake GPU")  # as stored_ceilings builds it
    resident = 3 * 4 * 2**18  # 3 MiB of saxpy arrays, inside the 8 MiB L2, at the L2's speed
    row = rates(2 * 2**18, resident, resident / L2_BPS, "float32", ceilings)
    assert row["ceiling_gbps"] == pytest.approx(l2.value) and row["pct_peak_bw"] <= 105
    held_to_hbm = rates(2 * 2**18, resident, resident / L2_BPS, "float32",
                        Ceilings({("bandwidth_gbps", "float32"): hbm.value}, llc_bytes=L2))
    assert held_to_hbm["pct_peak_bw"] > 250  # what the mismatch read before there was an L2 roof
    far = 8 * L2
    assert rates(far / 6, far, far / HBM_BPS, "float32", ceilings)["ceiling_gbps"] == pytest.approx(hbm.value)


def test_the_l2_roof_is_refused_in_launch_mode_and_without_an_l2_size(bandwidth_gpu):
    from workbench.measure.isolation import InProcessExecutor
    from workbench.roofs.peaks import AUTO_CONFIG, gpu_l2_peak

    worker = InProcessExecutor()
    try:
        bandwidth_gpu.modes = ()  # no kernel timer: launch mode
        refused = gpu_l2_peak(bandwidth_gpu, worker, ["fakegpu"], AUTO_CONFIG, 20.0, [], auto=True)
        assert refused.value is None and "launch mode" in refused.method
        bandwidth_gpu.dev.l2_bytes = 0
        none = gpu_l2_peak(bandwidth_gpu, worker, ["fakegpu"], AUTO_CONFIG, 20.0, [], auto=True)
        assert none.value is None and "reports no L2 size" in none.method
    finally:
        worker.close()

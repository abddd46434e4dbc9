"""GPU timing on the fake GPU (tests/fakegpu.py, issue 37): timing modes named and chosen with a reason, clocks
brought up before timing, samples under the clock dropped and counted, a GPU visit's own budget, the cold flush
sized from the device, energy per call from the counter, and rounds that keep each round's readings."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fakegpu import FakeBackend, FakeDevice, FakeMonitor

from workbench.backends.registry import get
from workbench.measure.audit import NoAudit
from workbench.measure.gpu_budget import QUICK_GPU, GpuBudget
from workbench.measure.gpu_visit import (
    ClockGate,
    ClockWarmup,
    energy_per_call,
    merge_gpu_rounds,
    visit_config,
    warm_clocks,
)
from workbench.measure.timer import TimingConfig, time_calls
from workbench.measure.timing_modes import choose_timer, timing_mode_of


def _warm(dev: FakeDevice) -> None:
    """The fake device at full clock."""
    dev.warm_busy_s = dev.ramp_s
    dev.free_at = __import__("time").perf_counter()


def test_a_cpu_backend_times_in_host_mode_and_says_nothing():
    choice = choose_timer(get("numpy"), None)
    assert choice.mode == "host" and choice.note == "" and choice.timer.kind == get("numpy").timer().kind
    asked = choose_timer(get("numpy"), "kernel")
    assert asked.mode == "host" and "CPU" in asked.note


def test_a_gpu_prefers_kernel_mode_and_falls_back_to_launch_saying_why():
    assert choose_timer(FakeBackend(), None).mode == "kernel"
    assert "GPU default" in choose_timer(FakeBackend(), None).note
    plain = choose_timer(FakeBackend(modes=()), None)
    assert plain.mode == "launch" and "kernel: the fake GPU was made without kernel mode" in plain.note
    asked = choose_timer(FakeBackend(modes=()), "graph")
    assert asked.mode == "launch" and "asked for graph, unavailable" in asked.note
    assert timing_mode_of(FakeBackend(), FakeBackend().timer()) == "launch"
    with pytest.raises(ValueError, match="valid timing modes: host, launch, kernel, graph"):
        choose_timer(FakeBackend(), "cycles")
    with pytest.raises(ValueError, match="unknown timing mode 'wall'"):
        TimingConfig(timing_mode="wall")


def test_kernel_mode_leaves_the_launch_out_and_launch_mode_keeps_it():
    dev = FakeDevice(work_s=50e-6, launch_s=300e-6)
    b = FakeBackend(dev)
    _warm(dev)
    launch = b.timer().measure(dev.launch)
    kernel = b.mode_timer("kernel").measure(dev.launch)
    assert launch.device_s >= 300e-6
    assert kernel.device_s == pytest.approx(50e-6, rel=0.2)


def test_clocks_come_up_before_timing_and_the_ramp_is_not_measured():
    dev = FakeDevice(work_s=50e-6, launch_s=0.0, ramp_s=0.02)
    timer = FakeBackend(dev).mode_timer("kernel")
    cold = timer.measure(dev.launch).device_s  # an idle device: the first call runs at the idle clock
    assert cold > 3 * 50e-6
    dev.free_at, dev.warm_busy_s = 0.0, 0.0  # idle again
    warm = warm_clocks(timer, dev.launch, FakeMonitor(dev), GpuBudget())
    assert warm.warmed is True and warm.sm_mhz >= 0.9 * dev.max_mhz and warm.max_mhz == dev.max_mhz
    assert 0.01 < warm.busy_s < 0.05
    assert timer.measure(dev.launch).device_s == pytest.approx(50e-6, rel=0.15)


def test_a_clock_that_never_comes_up_is_bounded_and_reported():
    dev = FakeDevice(work_s=50e-6, launch_s=0.0, ramp_s=10.0)
    warm = warm_clocks(FakeBackend(dev).mode_timer("kernel"), dev.launch, FakeMonitor(dev),
                       GpuBudget(clock_warmup_limit_s=0.02))
    # bounded: warm-up stops at its limit of busy time, or at twice that in wall time on a loaded host
    assert warm.warmed is False and 0.0 < warm.busy_s < 0.05
    unread = warm_clocks(FakeBackend(dev).mode_timer("kernel"), dev.launch, None, GpuBudget())
    assert unread.warmed is None and 0.0 < unread.busy_s <= 0.11  # a tenth of the limit (or 2x that in wall time)


class _ThrottledFirst(FakeMonitor):
    """A monitor that reads a slowing throttle reason for its first ``n`` readings."""

    def __init__(self, dev: FakeDevice, n: int) -> None:
        super().__init__(dev)
        self.n = n

    def read(self) -> dict:
        r = super().read()
        if self.reads <= self.n:
            r["gpu_throttle"] = "hw slowdown"
        return r


def test_samples_under_a_throttle_or_a_low_clock_are_dropped_and_counted():
    dev = FakeDevice(work_s=20e-6, launch_s=0.0)
    _warm(dev)
    timer = FakeBackend(dev).mode_timer("kernel")
    cfg = TimingConfig(warmup_s=0.0, min_samples=10, max_samples=10, budget_s=0.0)
    gate = ClockGate(_ThrottledFirst(dev, 3), 0.9 * dev.max_mhz, limit=100)
    timing = time_calls(timer, [dev.launch], cfg, audit=NoAudit("test"), gate=gate)
    assert timing.discarded == 3 and len(timing.samples_s) == 10 and gate.reasons == {"hw slowdown": 3}
    low = ClockGate(FakeMonitor(dev), 2 * dev.max_mhz, limit=4)  # a mark the clock never reaches: 4 drops at most
    timing = time_calls(timer, [dev.launch], cfg, audit=NoAudit("test"), gate=low)
    assert timing.discarded == 4 and len(timing.samples_s) == 10 and "SM clock below" in next(iter(low.reasons))
    plain = time_calls(timer, [dev.launch], cfg, audit=NoAudit("test"))
    assert plain.discarded == 0


def test_a_gpu_visit_takes_at_least_ten_samples_and_its_device_time():
    cfg = TimingConfig(min_samples=3, max_samples=50, min_sample_s=100e-6)
    big = visit_config(cfg, ClockWarmup(per_call_s=5e-3, wall_per_call_s=5e-3))
    assert big.min_samples == 20 and big.max_samples == 50  # 0.1 s of 5 ms calls
    huge = visit_config(cfg, ClockWarmup(per_call_s=0.2, wall_per_call_s=0.2))
    assert huge.min_samples == 10  # never 9 samples, whatever a call costs
    small = visit_config(cfg, ClockWarmup(per_call_s=1e-6, wall_per_call_s=5e-6))
    assert small.min_samples == 1000 and small.max_samples == 1000  # samples of 100 us
    quick = visit_config(TimingConfig(min_samples=3, gpu=QUICK_GPU), ClockWarmup(per_call_s=1e-3,
                                                                                 wall_per_call_s=1e-3))
    assert quick.min_samples == 25
    cold = visit_config(TimingConfig(cache="cold"), ClockWarmup(per_call_s=1e-6, wall_per_call_s=1e-6))
    assert cold.min_samples == 5000  # one call a sample: capped


def test_energy_per_call_comes_from_the_counter_or_says_why_not():
    dev = FakeDevice(work_s=100e-6, launch_s=0.0, power_w=250.0)
    _warm(dev)
    j, gflop_j, method = energy_per_call(dev.launch, dev.synchronize, FakeMonitor(dev), 0.05, 100e-6, 1e6)
    assert j == pytest.approx(100e-6 * 250.0, rel=0.2) and gflop_j == pytest.approx(1e-3 / j)
    assert "energy counter over" in method
    assert energy_per_call(dev.launch, dev.synchronize, FakeMonitor(dev, energy=False), 0.05, 1e-4, 1e6)[2] \
        == "absent: fake-nvml has no energy counter for this device"
    assert energy_per_call(dev.launch, dev.synchronize, None, 0.05, 1e-4, 1e6)[2].startswith("absent: no GPU monitor")


def test_the_cold_flush_is_twice_the_l2_the_device_reports():
    b = FakeBackend(FakeDevice(l2_bytes=3 << 20))
    assert b.flush_size_bytes() == 6 << 20
    b.flush_cache()
    assert b.dev.flushed_bytes == [6 << 20]


def test_rounds_keep_each_rounds_gpu_readings():
    a = {"clock_warmup_s": 0.02, "samples_discarded": 1, "round_gpu": json.dumps([{"sm_mhz": 1900}]),
         "timing_mode": "kernel", "energy_j_per_call": 0.5}
    b = {"clock_warmup_s": 0.01, "samples_discarded": 2, "round_gpu": json.dumps([{"sm_mhz": 1950}]),
         "timing_mode": "kernel"}
    out = merge_gpu_rounds(a, b)
    assert out["clock_warmup_s"] == pytest.approx(0.03) and out["samples_discarded"] == 3
    assert [r["sm_mhz"] for r in json.loads(out["round_gpu"])] == [1900, 1950] and out["energy_j_per_call"] == 0.5
    assert merge_gpu_rounds({}, {})["round_gpu"] is None


@pytest.fixture
def fake_gpu(fresh_registry, monkeypatch: pytest.MonkeyPatch):
    """The fake GPU registered as a backend with a saxpy variant (one fake kernel a call) and its NVML monitor."""
    import fakegpu
    import numpy as np

    from workbench.backends import register_backend, register_runtime, registry
    from workbench.catalog import variant
    from workbench.catalog.registry import unregister_variant
    from workbench.measure import backend_facts

    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    register_runtime(fakegpu.DECLARATION)
    backend = FakeBackend(FakeDevice(work_s=30e-6, launch_s=10e-6))
    register_backend(backend)
    monkeypatch.setitem(backend_facts._gpu_monitors, fakegpu.NAME, FakeMonitor(backend.dev))

    def fake_saxpy(ctx):
        alpha = np.dtype(ctx.dtype).type(1.7)

        def run(inputs, outputs):
            np.multiply(inputs["x"], alpha, out=outputs["out"])
            outputs["out"] += inputs["y"]
            backend.dev.launch()
        return run

    variant("saxpy", fakegpu.NAME, fakegpu.NAME, description="saxpy on the fake GPU")(fake_saxpy)
    try:
        yield backend
    finally:
        unregister_variant("saxpy", fakegpu.NAME)


def test_a_gpu_row_names_its_mode_clocks_and_samples_and_a_cpu_row_stays_host(fake_gpu, tmp_path, monkeypatch):
    import workbench

    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")  # no roof probes: this test is about the timing
    res = workbench.benchmark(kernel="saxpy", variants=["fakegpu", "numpy"], backends=["fakegpu", "numpy"],
                              sizes=[4099], rounds=2, budget_s=0.02, isolation="in-process", gpu_min_device_s=0.01,
                              gpu_energy_s=0.05, store=tmp_path / "s.sqlite", progress=False)
    rows = {(r["variant"], r["backend"]): r for _, r in res.df.iterrows()}
    gpu, cpu = rows["fakegpu", "fakegpu"], rows["numpy", "numpy"]
    assert gpu["status"] == "ok", gpu["message"]
    assert gpu["timing_mode"] == "kernel" and "timing mode kernel" in gpu["message"]
    assert gpu["n_samples"] >= 20 and gpu["clock_warmup_s"] > 0  # >= 10 a round, after the clocks came up
    readings = json.loads(gpu["round_gpu"])
    assert len(readings) == 2 and all(r["warmed"] for r in readings) and readings[0]["sm_mhz"] > 0
    assert gpu["median_s"] == pytest.approx(30e-6, rel=0.3)  # the kernel, not its launch
    assert gpu["energy_j_per_call"] > 0 and "energy counter" in gpu["energy_method"]
    assert cpu["timing_mode"] == "host" and pd.isna(cpu["round_gpu"]) and pd.isna(cpu["clock_warmup_s"])


def test_rows_of_two_timing_modes_are_never_judged_against_each_other():
    import pandas as pd

    from workbench.judge.compare import compare_runs, judge_pair, speedup_vs_baseline
    from workbench.report.sample_data import synthetic_results

    a, b = synthetic_results("run-a", seed=1), synthetic_results("run-b", seed=2)
    a["timing_mode"], b["timing_mode"] = "kernel", "kernel"
    b.loc[b.index[0], "timing_mode"] = "launch"
    table = compare_runs(pd.concat([a, b], ignore_index=True), "run-a", "run-b")
    clashed = table[table["verdict"].str.startswith("not compared")]
    assert len(clashed) == 1 and clashed.iloc[0]["verdict"] == "not compared (timing modes kernel / launch)"
    assert table.attrs["timing_modes"] == "1 cell(s) not compared: the two runs timed them in different timing modes"
    assert not table["verdict"].drop(clashed.index).str.startswith("not compared").any()
    assert judge_pair(a.iloc[0], b.iloc[0])["verdict"] == "not compared (timing modes kernel / launch)"
    one = a.copy()
    one.loc[one["backend"] != one["backend"].iloc[0], "timing_mode"] = "host"
    judged = speedup_vs_baseline(one)
    across = judged[(judged["backend"] != judged["baseline_backend"]) & judged["baseline_backend"].notna()]
    assert len(across) and across["verdict"].str.startswith("not compared (timing modes").all()

"""The harness: statistics, the adaptive timing loop, cold caches, cell statuses, the worker's hard timeout."""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
import tracemalloc

import numpy as np
import pytest

from workbench.backends.base import Sample, SyncWallTimer, Timer
from workbench.catalog import registry as catalog
from workbench.catalog.spec import KernelSpec, Variant
from workbench.core.record import RESULT_COLUMNS
from workbench.judge.stats import relative_spread
from workbench.measure import Cell, CellWorker, TimingConfig, run_cell, summarize, time_calls
from workbench.measure.audit import NoAudit
from workbench.measure.cell import InputCache, is_oom
from workbench.measure.isolation import execute_cell
from workbench.measure.worker import WorkerTimeout

# -- statistics ---------------------------------------------------------------------------------

def test_summarize_known_samples():
    st = summarize([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (st.n, st.median, st.mean, st.min, st.q1, st.q3, st.iqr) == (5, 3.0, 3.0, 1.0, 2.0, 4.0, 2.0)
    assert st.rel_spread == pytest.approx(2 / 3)
    st = summarize([1.0, 2.0, 3.0, 4.0])  # linear interpolation between order statistics
    assert (st.median, st.q1, st.q3) == (2.5, 1.75, 3.25)
    assert summarize([7e-6]).rel_spread == 0.0
    empty = summarize([])
    assert empty.n == 0 and math.isnan(empty.median)
    assert relative_spread([1.0, 1.0, 1.0, 1.0]) == 0.0


# -- the timing loop ----------------------------------------------------------------------------

#: The loop's own mechanics are tested with a scripted timer and plain functions: nothing to audit.
UNAUDITED = NoAudit("the timing loop's mechanics, with a scripted timer")


class ScriptedTimer(Timer):
    """Runs the function, then reports device times from a script (so spreads are known)."""

    kind = "scripted"

    def __init__(self, times):
        self.times = itertools.cycle(times)
        self.calls = 0

    def measure(self, fn):
        fn()
        self.calls += 1
        t = next(self.times)
        return Sample(device_s=t, host_s=t / 10)


def test_loop_stops_on_spread_after_min_samples():
    cfg = TimingConfig(warmup_s=0.0, budget_s=10.0, min_samples=5, target_spread=0.02, min_sample_s=0)
    t = time_calls(ScriptedTimer([1e-3]), [lambda: None], cfg, audit=UNAUDITED)
    assert t.stopped_by == "spread" and len(t.samples_s) == 5
    assert t.samples_s == [1e-3] * 5 and t.host_samples_s == [1e-4] * 5


def test_loop_stops_on_budget_when_spread_stays_high():
    cfg = TimingConfig(warmup_s=0.0, budget_s=0.05, min_samples=3, target_spread=0.02, min_sample_s=0)
    t0 = time.perf_counter()
    t = time_calls(ScriptedTimer([1e-3, 3e-3]), [lambda: time.sleep(0.002)], cfg, audit=UNAUDITED)
    elapsed = time.perf_counter() - t0
    assert t.stopped_by == "budget"
    assert len(t.samples_s) >= 3
    assert 0.04 < elapsed < 1.0


def test_loop_takes_min_samples_even_with_no_budget_and_stops_at_max():
    t = time_calls(ScriptedTimer([1e-3, 3e-3]), [lambda: None],
                   TimingConfig(warmup_s=0, budget_s=0, min_samples=7, min_sample_s=0), audit=UNAUDITED)
    assert len(t.samples_s) == 7 and t.stopped_by == "budget"
    t = time_calls(ScriptedTimer([1e-3, 3e-3]), [lambda: None],
                   TimingConfig(warmup_s=0, budget_s=60, min_samples=3, max_samples=9, min_sample_s=0), audit=UNAUDITED)
    assert len(t.samples_s) == 9 and t.stopped_by == "max_samples"


def test_deadline_ends_the_loop_below_min_samples():
    cfg = TimingConfig(warmup_s=0, budget_s=60, min_samples=1000, max_samples=2000, min_sample_s=0)
    t = time_calls(ScriptedTimer([1e-3, 5e-3]), [lambda: time.sleep(0.001)], cfg,
                   deadline=time.perf_counter() + 0.05, audit=UNAUDITED)
    assert t.stopped_by == "deadline" and 0 < len(t.samples_s) < 1000


def test_warmup_is_by_time_and_at_least_one_call():
    # Each call's start and end are measured, not assumed: a busy machine stretched the 1 ms sleep to 15 ms
    # (2 warm-up calls where an idle one makes ~27), so the checks follow the calls' real times.
    begins: list[float] = []
    ends: list[float] = []

    def call():
        begins.append(time.perf_counter())
        time.sleep(0.001)
        ends.append(time.perf_counter())

    t0 = time.perf_counter()
    t = time_calls(ScriptedTimer([1e-3]), [call],
                   TimingConfig(warmup_s=0.03, budget_s=0, min_samples=1, min_sample_s=0), audit=UNAUDITED)
    k = t.warmup_calls
    assert 1 <= k < len(begins)  # the warm-up calls, then the sample's
    # no warm-up call that ended within 30 ms of the first one's start was the last: it went on
    assert all(end - begins[0] < 0.03 for end in ends[:k - 1]), (k, [e - begins[0] for e in ends[:k]])
    assert begins[k] - t0 >= 0.03  # and the samples start only once 30 ms have passed
    t = time_calls(ScriptedTimer([1e-3]), [lambda: None], TimingConfig(warmup_s=0, budget_s=0, min_samples=1),
                   audit=UNAUDITED)
    assert t.warmup_calls == 1


def test_short_calls_are_batched_and_reported_per_call():
    counter = {"n": 0}

    def tiny():
        counter["n"] += 1

    cfg = TimingConfig(warmup_s=0.01, budget_s=0.05, min_samples=5, min_sample_s=100e-6)
    t = time_calls(SyncWallTimer(lambda: None), [tiny], cfg, audit=UNAUDITED)
    assert t.calls_per_sample > 5
    # per call, not per batch (median: a preempted batch on a loaded 2-core machine may be slower)
    assert sorted(t.samples_s)[len(t.samples_s) // 2] < 50e-6
    assert counter["n"] >= t.warmup_calls + t.calls_per_sample * len(t.samples_s)


def test_inputs_rotate_between_calls():
    seen = []
    calls = [lambda i=i: seen.append(i) for i in range(3)]
    time_calls(ScriptedTimer([1e-3]), calls, TimingConfig(warmup_s=0, budget_s=0, min_samples=6, min_sample_s=0),
               audit=UNAUDITED)
    assert set(seen) == {0, 1, 2}


def test_cold_cache_flushes_before_every_sample_outside_the_timed_region():
    flushes = []

    def flush():
        flushes.append(1)
        time.sleep(0.01)

    cfg = TimingConfig(warmup_s=0, budget_s=0, min_samples=4, cache="cold", min_sample_s=1.0)
    t = time_calls(SyncWallTimer(lambda: None), [lambda: None], cfg, flush=flush, audit=UNAUDITED)
    assert t.calls_per_sample == 1  # a batch would warm the cache again
    assert len(flushes) == t.warmup_calls + len(t.samples_s)
    assert max(t.samples_s) < 0.005  # the 10 ms flush is not in the samples


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="valid cache modes"):
        TimingConfig(cache="lukewarm")
    with pytest.raises(ValueError):
        TimingConfig(min_samples=10, max_samples=5)


# -- cells ------------------------------------------------------------------------------------

KERNEL = "wbtest_harness_scale"


def _spec() -> KernelSpec:
    return KernelSpec(
        name=KERNEL, description="out = 2 x (harness tests)", axes=("n",),
        make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
        reference=lambda inp, p: {"out": 2.0 * inp["x"]},
        output_shapes=lambda p: {"out": (p["n"],)},
        flops=lambda p: p["n"], bytes_moved=lambda p, isz: 2 * p["n"] * isz,
        sizes={"quick": [{"n": 4096}]})


@pytest.fixture
def harness_kernel():
    catalog.register_kernel(_spec())
    seen_inputs: list[int] = []
    calls = {"n": 0}

    def good(ctx):
        def run(inp, out):
            seen_inputs.append(id(inp["x"]))
            np.multiply(inp["x"], 2, out=out["out"])
        return run

    def degrades(ctx):  # right for verification, wrong after timing
        def run(inp, out):
            calls["n"] += 1
            np.multiply(inp["x"], 2 if calls["n"] <= 2 else 3, out=out["out"])
        return run

    def wrong(ctx):
        return lambda inp, out: np.multiply(inp["x"], 3, out=out["out"])

    for name, build in (("good", good), ("degrades", degrades), ("wrong", wrong)):
        catalog.register_variant(Variant(KERNEL, name, ("numpy",), build))
    yield seen_inputs
    catalog.unregister_kernel(KERNEL)


FAST = TimingConfig(warmup_s=0.005, budget_s=0.02, min_samples=3, target_spread=0.05)


def test_ok_cell_row_has_every_contract_column(harness_kernel):
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 4096}), FAST)
    assert set(RESULT_COLUMNS) <= set(row)
    assert row["status"] == "ok", row["message"]
    assert row["timer_kind"] == "sync+perf_counter" and row["timer_overhead_s"] > 0
    samples = json.loads(row["samples_s"])
    assert len(samples) == row["n_samples"] >= 3 and row["median_s"] == pytest.approx(np.median(samples))
    assert row["q1_s"] <= row["median_s"] <= row["q3_s"]
    assert row["flops"] == 4096 and row["bytes"] == 2 * 4096 * 4
    assert row["gbps"] == pytest.approx(row["bytes"] / row["median_s"] / 1e9)
    assert row["intensity"] == pytest.approx(4096 / (2 * 4096 * 4))
    assert row["max_error"] <= row["tolerance"]
    assert row["first_call_s"] > 0 and row["setup_s"] > 0
    assert row["bound"] == catalog.get_kernel(KERNEL).bound and row["library"] is False
    assert row["peak_mem_bytes"] is not None and row["mem_method"]
    assert row["pct_peak_bw"] is None  # no peaks measured
    assert row["n_inputs"] == 3 and len(set(harness_kernel)) == 3  # three input sets were used
    assert json.loads(row["params"]) == {"n": 4096} and row["size"] == 4096 and row["size_label"] == "n=4096"


def test_percent_of_peak_uses_the_given_peaks(harness_kernel):
    peaks = {("bandwidth_gbps", "float32"): 1.0, ("gflops", "float32"): 2.0}
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 4096}), FAST, peaks=peaks)
    assert row["pct_peak_bw"] == pytest.approx(100 * row["gbps"] / 1.0)
    assert row["pct_peak_flops"] == pytest.approx(100 * row["gflops"] / 2.0)
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float64", {"n": 4096}), FAST, peaks=peaks)
    assert row["pct_peak_flops"] is None  # no float64 GEMM peak: no comparison across dtypes


def test_wrong_result_is_incorrect_and_not_timed(harness_kernel):
    row = run_cell(Cell.make(KERNEL, "wrong", "numpy", "float32", {"n": 4096}), FAST)
    assert row["status"] == "incorrect" and "not timed" in row["message"]
    assert row["n_samples"] is None and row["max_error"] > row["tolerance"]


def test_output_is_verified_again_after_timing(harness_kernel):
    row = run_cell(Cell.make(KERNEL, "degrades", "numpy", "float32", {"n": 4096}), FAST)
    assert row["status"] == "incorrect" and "after timing" in row["message"]
    assert row["n_samples"] >= 3  # the timings are kept, flagged by the status


def test_shared_inputs_give_the_same_answer(harness_kernel):
    cache = InputCache()
    rows = [run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 999}), FAST, inputs=cache)
            for _ in range(2)]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert rows[0]["max_error"] == rows[1]["max_error"]


def test_peak_memory_leaves_tracemalloc_off(harness_kernel):
    assert not tracemalloc.is_tracing()
    run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 4096}), FAST)
    assert not tracemalloc.is_tracing()


def test_unknown_names_and_known_unsupported_become_rows(harness_kernel):
    row = run_cell(Cell.make(KERNEL, "nope", "numpy", "float32", {"n": 8}), FAST)
    assert row["status"] == "error" and "valid variants" in row["message"] and row["traceback"]
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 8}, unsupported="no reason"), FAST)
    assert row["status"] == "unsupported" and row["message"] == "no reason"


def test_oom_classification():
    class OutOfMemoryError(RuntimeError):  # the name torch and cupy use
        pass

    assert is_oom(MemoryError())
    assert is_oom(OutOfMemoryError("x"))
    assert is_oom(RuntimeError("CUDA error: out of memory"))
    assert not is_oom(RuntimeError("index out of range"))
    assert not is_oom(ValueError("out of memory"))


# -- the worker -------------------------------------------------------------------------------

def test_worker_abandons_a_hung_job_and_carries_on():
    w = CellWorker()
    release = threading.Event()
    t0 = time.perf_counter()
    with pytest.raises(WorkerTimeout):
        w.run(lambda cancel: release.wait(30), timeout_s=0.2)
    assert time.perf_counter() - t0 < 2
    assert w.still_running_abandoned() == 1
    assert w.run(lambda cancel: 42, timeout_s=5) == 42
    with pytest.raises(ZeroDivisionError):
        w.run(lambda cancel: 1 / 0, timeout_s=5)
    release.set()
    time.sleep(0.1)
    assert w.still_running_abandoned() == 0
    w.close()


def test_execute_cell_turns_a_hang_into_timeout(harness_kernel):
    release = threading.Event()

    def hangs(ctx):
        return lambda inp, out: release.wait(30)

    catalog.register_variant(Variant(KERNEL, "hangs", ("numpy",), hangs))
    w = CellWorker()
    row = execute_cell(Cell.make(KERNEL, "hangs", "numpy", "float32", {"n": 16}), FAST, w, timeout_s=0.3)
    assert row["status"] == "timeout" and "abandoned" in row["message"]
    row = execute_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 16}), FAST, w, timeout_s=5)
    assert row["status"] == "ok"
    assert "still running" in row["message"]  # the abandoned call may disturb this timing: said so
    release.set()
    w.close()



def test_conditions_are_recorded_around_the_timing(harness_kernel, monkeypatch):
    from workbench.core import conditions
    from workbench.measure import timed

    class FakeGpu:
        name = "fake"

        def read(self):
            return {"gpu_clock_mhz": 1410.0, "gpu_temp_c": 70.0, "gpu_throttle": "sw thermal"}

    monkeypatch.setattr(timed, "gpu_monitor", lambda backend: FakeGpu())
    # a short cell judges the machine by a window of at least MIN_USABLE_S: a reading that old must exist (in a
    # process of its own, this test is the first to take one)
    conditions.take_reading()
    time.sleep(conditions.MIN_USABLE_S + 0.05)
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 4096}), FAST)
    assert row["status"] == "ok" and row["load_avg_1m"] is not None and 0 <= row["other_cpu_share"] <= 1
    assert (row["gpu_clock_mhz"], row["gpu_temp_c"], row["gpu_throttle"]) == (1410.0, 70.0, "sw thermal")
    assert row["rounds"] == 1 and json.loads(row["round_medians_s"]) == [row["median_s"]]
    assert row["noise"] is not None and isinstance(row["noisy"], bool)


def test_gpu_monitor_is_probed_once_per_cuda_or_rocm_backend(monkeypatch):
    from workbench.measure import backend_facts as facts

    probes = []

    def probe(platform, index=0):
        probes.append((platform, index))
        return (object(), "") if platform == "cuda" else (None, "amdsmi is not installed")

    class Fake:
        def __init__(self, name, device_class, device_id=0):
            self.name, self.device_class, self.device_id = name, device_class, device_id

    monkeypatch.setattr(facts, "probe_gpu_monitor", probe)
    monkeypatch.setattr(facts, "_gpu_monitors", {})
    cuda, rocm, cpu = Fake("cupy", "cuda", 1), Fake("torch-cuda", "rocm"), Fake("numpy", "cpu")
    assert facts.gpu_monitor(cuda) is facts.gpu_monitor(cuda) is not None
    assert facts.gpu_monitor(rocm) is None and facts.gpu_monitor(rocm) is None
    assert facts.gpu_monitor(cpu) is None
    assert probes == [("cuda", 1), ("rocm", 0)]  # once each, lazily; never for a CPU backend


def test_later_rounds_skip_the_first_call_and_memory(harness_kernel):
    row = run_cell(Cell.make(KERNEL, "good", "numpy", "float32", {"n": 4096}), FAST, later_round=True)
    assert row["status"] == "ok" and row["n_samples"] >= 3 and row["max_error"] <= row["tolerance"]
    assert row["first_call_s"] is None and row["peak_mem_bytes"] is None


def test_input_cache_keeps_groups_within_its_byte_limit(harness_kernel):
    spec = catalog.get_kernel(KERNEL)
    cache = InputCache(max_bytes=20_000)  # room for 2500 doubles
    a = cache.host_inputs(spec, {"n": 1000}, "float64", 0)
    assert cache.host_inputs(spec, {"n": 1000}, "float64", 0) is a
    cache.host_inputs(spec, {"n": 500}, "float64", 0)
    assert cache.host_inputs(spec, {"n": 1000}, "float64", 0) is a  # two small groups fit
    cache.host_inputs(spec, {"n": 2000}, "float64", 0)
    assert cache.host_inputs(spec, {"n": 1000}, "float64", 0) is not a  # evicted for the large one
    big = InputCache(max_bytes=0)
    x = big.host_inputs(spec, {"n": 1000}, "float64", 0)
    assert big.host_inputs(spec, {"n": 1000}, "float64", 0) is x  # the current group is always kept


# -- no replay: rotated input sets differ, and a fixed input set is said to be unprotected ---------------------

def test_rotated_input_sets_differ_for_every_catalog_kernel():
    from workbench.measure.case import make_host_inputs
    from workbench.measure.cell import identical_sets

    for name in catalog.kernels():
        spec = catalog.get_kernel(name)
        params = spec.sizes["verify"][0]
        hosts = [make_host_inputs(spec, params, "float32", s) for s in (0, 1, 2)]
        assert identical_sets(hosts) == [], name


def test_identical_rotated_inputs_are_noted(harness_kernel):
    import dataclasses

    fixed = dataclasses.replace(_spec(), name=KERNEL + "_fixed",
                                make_inputs=lambda p, rng: {"x": np.linspace(-1, 1, p["n"])})
    catalog.register_kernel(fixed)
    try:
        catalog.register_variant(Variant(fixed.name, "good", ("numpy",),
                                         lambda ctx: lambda i, o: np.multiply(i["x"], 2, out=o["out"])))
        row = run_cell(Cell.make(fixed.name, "good", "numpy", "float32", {"n": 4096}), FAST)
    finally:
        catalog.unregister_kernel(fixed.name)
    assert row["status"] == "ok"
    assert "rotated input sets 0 and 1, 0 and 2, 1 and 2 are identical" in row["message"]


def test_an_autotuned_variant_s_chosen_config_is_read_in_words():
    from workbench.measure.cell import tuned_config

    class Config:  # shaped like triton.Config
        def all_kwargs(self):
            return {"BLOCK_M": 64, "num_warps": 4, "maxnreg": None}

    def call(i, o):
        pass

    assert tuned_config(call) is None
    call.best_config = None
    assert tuned_config(call) is None
    call.best_config = Config()
    assert tuned_config(call) == "BLOCK_M=64, num_warps=4"
    call.best_config = lambda: "tile 32"
    assert tuned_config(call) == "tile 32"


def test_warm_up_credit_for_the_first_call_and_check_is_for_cpus_only():
    """A GPU idles while the CPU computes the reference: crediting that time left round 1 of 28 of 65 GPU cells
    on an H100 over 1.3x slower than the later rounds. A CPU was warmed by it, and is credited."""
    import dataclasses

    from workbench.measure.cell import warmup_left
    from workbench.measure.timer import TimingConfig

    config = dataclasses.replace(TimingConfig(), warmup_s=0.1)
    assert warmup_left(config, 0.03, "cpu").warmup_s == pytest.approx(0.07)
    assert warmup_left(config, 0.5, "cpu").warmup_s == 0.0
    assert warmup_left(config, 0.5, "gpu").warmup_s == pytest.approx(0.1)


def test_an_in_process_cell_runs_on_the_callers_numba_threads():
    """numba's thread count is per Python thread: a notebook's numba.set_num_threads(1) held in its own thread
    only, and in-process cells (run on the workbench's cell thread) used every core (tutorial 07's run B)."""
    numba = pytest.importorskip("numba")
    from workbench.measure.worker import CellWorker

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread here: nothing to carry")
    worker = CellWorker()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert worker.run(lambda cancel: numba.get_num_threads(), timeout_s=30) == 1
        numba.set_num_threads(2)
        assert worker.run(lambda cancel: numba.get_num_threads(), timeout_s=30) == 2
    finally:
        numba.set_num_threads(before)

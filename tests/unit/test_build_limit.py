"""Building a cell (inputs, reference, compilation) has its own time limit; the run limit starts after it.

Before: the build counted against the run's --timeout, so with --timeout 1 a numba cell timed out while
compiling, and the abandoned compile made the next cell time out too.
"""

from __future__ import annotations

import time

import numpy as np

from workbench.catalog import variant
from workbench.measure.cell import Cell, CellWorker, TimingConfig
from workbench.measure.isolation import execute_cell
from workbench.sweep.verification import verify

KERNEL = "_test_build_limit"
FAST = TimingConfig(warmup_s=0.0, budget_s=0.02, min_samples=3, target_spread=0.5, n_inputs=1)


def _register(temp_kernels, build_s: float, run_forever: bool = False) -> None:
    temp_kernels(KERNEL, like="relu")

    @variant(KERNEL, "slow-build", "numpy")
    def build(ctx):
        time.sleep(build_s)  # stands in for a long JIT compile
        if run_forever:
            return lambda inp, out: time.sleep(3600)
        return lambda inp, out: np.maximum(inp["x"], 0, out=out["out"])


def _cell() -> Cell:
    return Cell.make(KERNEL, "slow-build", "numpy", "float32", {"n": 4099})


def test_a_build_longer_than_the_run_limit_is_not_a_timeout(temp_kernels):
    _register(temp_kernels, build_s=1.5)
    worker = CellWorker()
    try:
        row = execute_cell(_cell(), FAST, worker, timeout_s=1.0, build_timeout_s=30.0)
    finally:
        worker.close()
    assert row["status"] == "ok", row["message"]
    assert row["setup_s"] >= 1.5


def test_a_build_past_its_own_limit_is_a_timeout_that_says_build(temp_kernels):
    _register(temp_kernels, build_s=4.0)
    worker = CellWorker()
    t0 = time.perf_counter()
    try:
        row = execute_cell(_cell(), FAST, worker, timeout_s=60.0, build_timeout_s=1.0)
    finally:
        worker.close()
    assert row["status"] == "timeout" and "build" in row["message"], row["message"]
    assert time.perf_counter() - t0 < 3.5  # the build limit, not the 60 s run limit


def test_a_hung_call_is_cut_at_the_run_limit_counted_from_the_end_of_the_build(temp_kernels):
    _register(temp_kernels, build_s=0.0, run_forever=True)
    worker = CellWorker()
    t0 = time.perf_counter()
    try:
        row = execute_cell(_cell(), FAST, worker, timeout_s=0.5, build_timeout_s=600.0)
    finally:
        worker.close()
    assert row["status"] == "timeout" and "never returned" in row["message"], row["message"]
    assert time.perf_counter() - t0 < 5  # not the 600 s build limit


def test_verify_separates_the_limits_too(temp_kernels):
    _register(temp_kernels, build_s=1.5)
    (row,) = verify(backends="numpy", kernels=KERNEL, variants="slow-build", seeds=(0,), sizes=[{"n": 4099}],
                    timeout_s=1.0, build_timeout_s=30.0)
    assert row.status == "ok", row.message

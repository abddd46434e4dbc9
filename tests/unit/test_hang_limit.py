"""A hung first call is stopped after a limit sized by the cell's budget, not after the whole run limit; once
the first call has returned, the run limit applies (a slow honest kernel keeps its time)."""

from __future__ import annotations

import math
import time

import numpy as np
import psutil
import pytest

from workbench.catalog import register_variant, unregister_variant
from workbench.catalog.spec import Variant
from workbench.measure.cell import Cell
from workbench.measure.isolation import make_executor
from workbench.measure.request import FIRST_CALL_FLOOR_S, CellRequest, CheckOnly, RoundRole
from workbench.measure.timer import TimingConfig
from workbench.sweep.driver import SweepSpec, run_sweep

K = "wb_bad"
FAST = {"budget_s": 0.05, "warmup_s": 0.01, "min_samples": 3, "max_samples": 20, "rounds": 1}
CELL = Cell.make(K, "good", "numpy", "float32", {"n": 4099})


def _request(timeout_s: float, warmup_s: float = 0.1, budget_s: float = 0.2, **kw) -> CellRequest:
    return CellRequest(CELL, TimingConfig(warmup_s=warmup_s, budget_s=budget_s), timeout_s=timeout_s, **kw)


def test_the_first_call_limit_is_sized_by_the_budget_and_the_run_limit():
    assert FIRST_CALL_FLOOR_S == 5.0
    assert _request(60).first_call_limit_s == 6.0  # a tenth of the run limit
    assert _request(20).first_call_limit_s == 5.0  # the floor
    assert _request(600).first_call_limit_s == 60.0
    assert _request(60, warmup_s=0.5, budget_s=2.0).first_call_limit_s == 25.0  # 10x warm-up + budget
    assert _request(3).first_call_limit_s == 3.0  # never past the run limit
    assert _request(math.inf).first_call_limit_s == math.inf  # no limit asked: none
    # no separate first call: a later round, a check-only request
    assert _request(60, role=RoundRole.LATER).first_call_limit_s == 60
    assert CellRequest(CELL, CheckOnly((0,)), timeout_s=60).first_call_limit_s == 60


@pytest.mark.parametrize("isolation, variant", [("process", "hang"), ("in-process", "sleep-hang")])
def test_a_hung_first_call_is_stopped_after_its_own_limit(bad_catalog, tmp_path, isolation, variant):
    spec = SweepSpec(kernels=[K], variants=["good", variant], backends=["numpy"], timeout_s=60,
                     isolation=isolation, **FAST)
    rows = {r["variant"]: r for r in run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows}
    hung = rows[variant]
    assert hung["status"] == "timeout", hung
    assert "first call did not return within 6 s" in hung["message"], hung["message"]
    # the run limit (60 s) would have been waited out before; not a fixed 30 s: a spinning first call is stopped
    # once it has had 80% of its 6 s limit in CPU seconds, which one busy core stretched to 30.8 s of wall time
    assert hung["wall_s"] < spec.timeout_s, hung
    assert rows["good"]["status"] == "ok"


@pytest.fixture
def slow_after_first():
    """A wb_bad variant whose first call is quick and every later one sleeps 0.7 s."""

    def build(ctx):
        calls = []

        def run(i, o):
            if calls:
                time.sleep(0.7)
            calls.append(1)
            np.add(i["a"], i["b"], out=o["out"])
        return run

    register_variant(Variant(K, "slow-after-first", ("numpy",), build))
    yield "slow-after-first"
    unregister_variant(K, "slow-after-first")


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_after_the_first_call_the_run_limit_applies(bad_catalog, slow_after_first, isolation):
    """The run takes longer than the first call's limit (5 s), within the run limit (30 s): ok."""
    ex = make_executor(isolation)
    try:
        cell = Cell.make(K, slow_after_first, "numpy", "float32", {"n": 4099})
        config = TimingConfig(warmup_s=0.01, budget_s=0.05, min_samples=3, max_samples=3, n_inputs=3)
        t0 = time.perf_counter()
        row = ex.execute(cell, config, timeout_s=30)
        took = time.perf_counter() - t0
    finally:
        ex.close()
    assert row["status"] == "ok", row["message"]
    assert took > FIRST_CALL_FLOOR_S, took  # else this test proves nothing: the first call's limit was not passed


def test_a_spare_worker_starts_while_a_first_call_looks_hung_and_replaces_it(bad_catalog):
    """The replacement for a worker killed for a hung first call was started during the wait, not after it."""
    ex = make_executor("process")
    try:
        hang = Cell.make(K, "sleep-hang", "numpy", "float32", {"n": 4099})
        good = Cell.make(K, "good", "numpy", "float32", {"n": 4099})
        row = ex.execute(hang, TimingConfig(warmup_s=0.01, budget_s=0.05), timeout_s=20)
        killed_at = time.time()
        assert row["status"] == "timeout" and "first call" in row["message"], row
        assert "numpy" in ex._spares  # started beside the hung worker
        assert ex.execute(good, TimingConfig(warmup_s=0.01, budget_s=0.05), timeout_s=20)["status"] == "ok"
        assert not ex._spares  # taken
        replacement = psutil.Process(ex._workers["numpy"].proc.pid)
        assert replacement.create_time() < killed_at
        closed = [w.proc for w in [*ex._workers.values()]]
    finally:
        ex.close()
    assert all(p.poll() is not None for p in closed)


def test_a_variant_that_hung_is_not_run_again_at_its_other_sizes(bad_catalog, tmp_path):
    """Each hang costs its first call's limit and a worker restart: the variant's later sizes in the same sweep
    are stored timeout, not run, saying where it hung; the honest variant runs at every size."""
    spec = SweepSpec(kernels=[K], variants=["good", "sleep-hang"], backends=["numpy"], sizes=[(4099,), (1001,)],
                     timeout_s=20, isolation="in-process", **FAST)
    rows = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows
    hung = sorted((r for r in rows if r["variant"] == "sleep-hang"), key=lambda r: r["wall_s"], reverse=True)
    assert [r["status"] for r in hung] == ["timeout", "timeout"]
    assert "first call did not return" in hung[0]["message"]
    assert hung[1]["message"].startswith("not run: wb_bad/sleep-hang on numpy hung earlier in this sweep at n=")
    assert hung[1]["wall_s"] < 1.0  # not waited for a second time
    assert {r["status"] for r in rows if r["variant"] == "good"} == {"ok"}

"""A kernel cannot game the clock (issue 23): each class of gaming ends non-ok with its class named, in
``verify``, ``bench`` and ``quick``, while the honest variants beside them stay ok.

The gaming variants live in tests/bad_catalog/wb_game (executed for real on numpy); ``quick`` gets the
callable forms. The GPU forms (device-wide synchronisation, side streams, persisting L2, graph replays) are in
tests/unit/test_gaming_gpu.py, with fakes.
"""

from __future__ import annotations

import json
import queue
import threading
import time

import numpy as np
import pytest

import workbench
from workbench.catalog import get_kernel, get_variant
from workbench.measure import audit
from workbench.measure.audit import (
    FINISHES_LATER,
    IMPOSSIBLE_SPEED,
    MEMOIZES,
    TAMPERS,
    TRADES_PRECISION,
    WORKS_ONLY_WHEN_CHECKED,
    Auditor,
    NoAudit,
)
from workbench.measure.timer import TimingConfig, time_calls
from workbench.sweep.verification import verify

K = "wb_game"

#: variant -> the class its message must name (None: honest, must stay ok)
EXPECTED = {
    "good": None,
    "good-returns": None,
    "checked-only": WORKS_ONLY_WHEN_CHECKED,
    "fingerprint": MEMOIZES,
    "memo-by-object": MEMOIZES,
    "finishes-later": FINISHES_LATER,
    "heap-search": TAMPERS,
    "patches-timer": TAMPERS,
    "float16-inside": TRADES_PRECISION,
    "tf32-inside": TRADES_PRECISION,
    "graph-replay": MEMOIZES,
}


def _judge(rows: dict[str, tuple[str, str]]) -> None:
    """Every expected variant has a row; honest ones ok, gaming ones non-ok naming their class."""
    assert set(rows) == set(EXPECTED), rows
    for name, kind in EXPECTED.items():
        status, message = rows[name]
        if kind is None:
            assert status == "ok", (name, message)
        else:
            assert status not in ("ok", "implausible") and kind in message, (name, status, message)


def test_verify_names_each_class(bad_catalog):
    rows = {r.variant: (r.status, r.message) for r in verify(backends="numpy", kernels=K, seeds=(0, 1))}
    _judge(rows)


def test_bench_names_each_class_and_keeps_honest_times(bad_catalog, tmp_path):
    res = workbench.benchmark(kernel=K, backends=["numpy"], sizes=[4099], budget_s=0.05, rounds=2,
                              store=str(tmp_path / "s.sqlite"), progress=False)
    recs = {r["variant"]: r for r in res.df.to_dict("records")}
    _judge({k: (r["status"], r["message"] or "") for k, r in recs.items()})
    assert 0 < recs["good"]["median_s"] < 1e-3


def _honest(a, b):
    return a + b


def _memo_by_id():
    cache: dict = {}

    def f(a, b):
        key = (id(a), id(b))
        if key not in cache:
            cache[key] = a + b
        return cache[key]
    return f


def _late():
    """Right on the first two calls with an input (the checks), then returns an array a thread fills later
    (only the newest one: a lazy result nobody waited for is never computed)."""
    state: dict = {"seen": {}}

    def work():
        while True:
            job = state["jobs"].get()
            while not state["jobs"].empty():  # only the newest call's output gets written, 2 ms late
                job = state["jobs"].get_nowait()
            threading.Event().wait(0.002)
            np.add(job[0], job[1], out=job[2])

    def f(a, b):
        n = state["seen"][id(a)] = state["seen"].get(id(a), 0) + 1
        if n <= 2:
            return a + b
        if "jobs" not in state:
            state["jobs"] = queue.Queue()
            threading.Thread(target=work, daemon=True).start()
        out = np.zeros_like(a)
        state["jobs"].put((a, b, out))
        return out
    return f


def _half(a, b):
    return (a.astype(np.float16) + b.astype(np.float16)).astype(np.float32)


def _setup(n, rng):
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_quick_names_each_class(tmp_path):
    from workbench.catalog import registry

    try:
        res = workbench.quick({"honest": _honest, "memo-by-id": _memo_by_id(), "late": _late(), "half": _half},
                              _setup, [4099], budget_s=0.05, rounds=1, name="gaming_quick",
                              store=str(tmp_path / "q.sqlite"), progress=False)
    finally:
        if "gaming_quick" in registry.kernels():
            registry.unregister_kernel("gaming_quick")  # other tests walk every registered kernel
    rows = {r["variant"]: (r["status"], r["message"] or "") for r in res.df.to_dict("records")}
    assert rows["honest"][0] == "ok", rows["honest"]
    for name, kind in (("memo-by-id", MEMOIZES), ("late", FINISHES_LATER), ("half", TRADES_PRECISION)):
        assert rows[name][0] == "incorrect" and kind in rows[name][1], (name, rows[name])


# -- impossible speed ------------------------------------------------------------------------------------------

def test_a_rate_beyond_the_device_is_implausible_never_fastest_never_faster(bad_catalog, tmp_path, monkeypatch):
    """A DRAM roof of 1 MB/s makes the honest add's measured bandwidth thousands of times any cache: the row
    ends ``implausible`` (the fallback roof test: no top roof measured), and reports and compare skip it."""
    from workbench.judge.compare import speedup_vs_baseline
    from workbench.report.findings import key_findings
    from workbench.roofs.throughput import BANDWIDTH, Ceilings
    from workbench.sweep import driver as sweep

    monkeypatch.setattr(sweep, "ensure_ceilings", lambda *a, **k: Ceilings({(BANDWIDTH, "float32"): 1e-3}))
    res = workbench.benchmark(kernel=K, variants=["good"], backends=["numpy"], sizes=[4099], budget_s=0.03,
                              rounds=1, store=str(tmp_path / "s.sqlite"), progress=False)
    (row,) = res.df.to_dict("records")
    assert row["status"] == "implausible" and IMPOSSIBLE_SPEED in row["message"], row["message"]
    assert not row["peak_note"]  # never explained away
    fast = dict(row, variant="fast", status="implausible", median_s=row["median_s"] / 100)
    slow = dict(row, variant="slow", status="ok", median_s=row["median_s"] * 2, message="")
    import pandas as pd

    df = pd.DataFrame([fast, slow, dict(slow, variant="slower", median_s=row["median_s"] * 4)])
    found = key_findings(df, reference="slower@numpy")
    assert found.findings and all(not f.fastest.startswith("fast @") for f in found.findings)
    assert any(f.fastest.startswith("slow @") for f in found.findings)
    table = speedup_vs_baseline(df, baseline_variant="slower", baseline_backend="numpy")
    assert "fast" not in set(table.get("variant", []))


def test_implausible_reason_fallback_and_roofs():
    row = {"gbps": 1000.0, "ceiling_gbps": 10.0, "gflops": 1.0, "ceiling_gflops": 100.0, "dtype": "float32"}
    assert IMPOSSIBLE_SPEED in audit.implausible_reason(row)
    assert audit.implausible_reason({**row, "gbps": 500.0}) is None  # 50x DRAM: an L1-resident kernel can
    assert IMPOSSIBLE_SPEED in audit.implausible_reason({**row, "gbps": 1.0, "gflops": 200.0})
    assert audit.implausible_reason({"gbps": 1e9}) is None  # no roof known: nobody can tell


# -- the parent's clock ----------------------------------------------------------------------------------------

def test_parent_rejects_statistics_not_of_the_samples_and_time_beyond_its_clock():
    samples = [1e-3, 2e-3, 3e-3]
    assert audit.check_reported(samples, 2e-3, 1, elapsed_s=1.0) == []
    (p,) = audit.check_reported(samples, 1e-9, 1, elapsed_s=1.0)
    assert "not the median" in p
    (p,) = audit.check_reported(samples, 2e-3, 1000, elapsed_s=1.0)  # 6 s of samples in 1 s
    assert "parent waited only" in p

    class Res:
        def __init__(self):
            self.status, self.message = workbench.core.status.Status.OK, None
            self.timing = type("T", (), {"samples_s": samples, "median_s": 1e-9, "calls_per_sample": 1})()

        def end(self, status, message):
            self.status, self.message = status, message

    r = audit.judge_reported(Res(), 1.0)
    assert r.status == "incorrect" and TAMPERS in r.message


# -- the auditor itself ----------------------------------------------------------------------------------------

def _case(variant: str, n: int = 1001):
    from workbench.backends import registry
    from workbench.measure.case import Case

    return Case(get_kernel(K), get_variant(K, variant), registry.get("numpy"), {"n": n}, "float32", seed=0)


def _sets(case, n=3):
    from workbench.measure.case import make_host_inputs

    sets = [(case.inputs, case.host_inputs)]
    for i in range(1, n):
        host = make_host_inputs(case.spec, case.params, case.dtype, i)
        sets.append((case.device_inputs(host), host))
    return sets


def test_audits_change_inputs_and_put_them_back_and_honest_kernels_pass(bad_catalog):
    case = _case("good")
    sets = _sets(case)
    before = [{k: v.copy() for k, v in dev.items()} for dev, _ in sets]
    out = case.outputs
    calls = [(lambda inp=inp: case.call(inp, out)) for inp, _ in sets]
    a = Auditor(case, sets, out, min_samples=5, probability=1.0, cost_share=float("inf"))
    t = time_calls(case.backend.timer(), calls, TimingConfig(warmup_s=0.01, budget_s=0.02, min_samples=5), audit=a)
    assert a.failure is None and t.audits >= 5 and t.input_changes >= t.audits
    for (dev, _), old in zip(sets, before, strict=True):
        for k in old:
            assert np.array_equal(dev[k], old[k])  # every change undone


def test_optional_audits_stop_at_their_share_of_the_loop(bad_catalog):
    case = _case("good")
    sets = _sets(case)
    calls = [(lambda inp=inp: case.call(inp, case.outputs)) for inp, _ in sets]
    a = Auditor(case, sets, case.outputs, min_samples=5, probability=1.0)
    t0 = time.perf_counter()
    t = time_calls(case.backend.timer(), calls, TimingConfig(warmup_s=0.05, budget_s=0.2, min_samples=5), audit=a)
    loop_s = time.perf_counter() - t0
    assert t.audits >= 1 and a.failure is None
    one = t.audit_s / t.audits  # the last audit may start just under the share
    assert t.audit_s <= audit.AUDIT_COST_SHARE * loop_s + 2 * one


def test_first_audit_is_always_taken_and_unpredictable_from_the_seed(bad_catalog):
    firsts = {Auditor(_case("good"), [], {}, min_samples=5)._first for _ in range(40)}
    assert len(firsts) > 1  # not derived from the cell's seed


def test_a_replaced_harness_function_is_named_and_put_back():
    from workbench.backends import base

    original = base.SyncWallTimer.measure
    base.SyncWallTimer.measure = lambda self, fn: base.Sample(1e-9, 1e-9)
    with pytest.raises(audit.AuditFailed, match="SyncWallTimer.measure"):
        audit.GUARD.check()
    assert base.SyncWallTimer.measure is original


def test_the_timer_is_held_against_the_harness_clock():
    audit.check_timer("sync+perf_counter", [(0.1, 0.1)] * 10)
    audit.check_timer("cuda-event", [(0.001, 0.1)] * 10)  # a device timer may report far less than the wall clock
    audit.check_timer("sync+perf_counter", [(1e-4, 1e-4)] * 8 + [(1e-4, 5e-3)] * 2)  # two samples lost the GIL
    with pytest.raises(audit.AuditFailed, match=TAMPERS):
        audit.check_timer("sync+perf_counter", [(1e-9, 1e-3)] * 10)
    with pytest.raises(audit.AuditFailed, match=TAMPERS):
        audit.check_timer("cuda-event", [(0.1, 0.1)] * 9 + [(0.5, 0.1)])


def test_timeit_is_the_one_unaudited_loop_and_says_why():
    assert not NoAudit("x").watch_timer and NoAudit("why").reason == "why"


def test_precision_note_and_settings():
    assert TRADES_PRECISION in audit.precision_note("float32", 4.5e-4, 1e-5)
    assert audit.precision_note("float32", 0.5, 1e-5) == ""  # plainly wrong, not a precision trade
    assert audit.precision_note("float32", 5e-6, 1e-5) == ""
    settings = {"torch_matmul_allow_tf32": True, "torch_cudnn_allow_tf32": False,
                "torch_float32_matmul_precision": "high"}
    assert "TF32 allowed" in audit.reduced_precision(settings, "float32")
    assert audit.reduced_precision(settings, "float16") == ""
    torch = pytest.importorskip("torch")
    got = audit.precision_settings()
    assert got is not None and got["torch_float32_matmul_precision"] == torch.get_float32_matmul_precision()
    json.dumps(got)


def test_a_timed_row_records_the_precision_settings_in_force(bad_catalog):
    torch = pytest.importorskip("torch")
    from workbench.measure.cell import Cell, run_cell

    row = run_cell(Cell.make(K, "good", "numpy", "float32", {"n": 1001}),
                   TimingConfig(warmup_s=0.005, budget_s=0.01, min_samples=3))
    assert row["status"] == "ok", row["message"]
    settings = json.loads(row["precision"])
    assert settings["torch_float32_matmul_precision"] == torch.get_float32_matmul_precision()


def test_a_variant_wrong_from_a_middle_round_is_caught_there(bad_catalog, tmp_path):
    """Rounds between the first and the last are not checked after timing; their audits catch a variant that
    turns wrong there, and the rotated sets are then checked too (the earlier round's timings are kept)."""
    from workbench.catalog import register_variant, unregister_variant
    from workbench.catalog.spec import Variant
    from workbench.sweep.driver import SweepSpec, run_sweep

    builds = {"n": 0}

    def flaky(ctx):
        builds["n"] += 1
        factor = 1.0 if builds["n"] == 1 else 1.5  # right in round 1, wrong from round 2 on
        return lambda i, o: np.multiply(np.add(i["a"], i["b"]), factor, out=o["out"])

    register_variant(Variant(K, "flaky", ("numpy",), flaky))
    try:
        spec = SweepSpec(kernels=[K], variants=["flaky"], backends=["numpy"], sizes=[(1001,)], rounds=3,
                         isolation="in-process", budget_s=0.06, warmup_s=0.005, min_samples=3)
        row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
    finally:
        unregister_variant(K, "flaky")
    assert row["status"] == "incorrect" and "audit:" in row["message"] and "after timing" in row["message"]
    assert builds["n"] == 2 and row["rounds"] == 1 and row["n_samples"] >= 3


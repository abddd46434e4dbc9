"""Sweeps: cells from axes, failure isolation, stopping early, resuming, peaks feeding % of peak."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from conftest import require_backend

from workbench.catalog import registry as catalog
from workbench.catalog.spec import KernelSpec, Variant
from workbench.judge import verdicts
from workbench.judge.dips import rounds_at_speed
from workbench.judge.stats import mode_median, round_weighted_quartiles
from workbench.measure.request import NO_VARIANT
from workbench.measure.rounds import _at_speed
from workbench.store.database import Store
from workbench.sweep.driver import SweepSpec, run_sweep
from workbench.sweep.suites import llm_shapes, suite_spec

KERNEL = "wbtest_sweep_scale"
FAST = dict(budget_s=0.02, warmup_s=0.005, min_samples=3, target_spread=0.05)


def _spec() -> KernelSpec:
    return KernelSpec(
        name=KERNEL, description="out = 2 x (sweep tests)", axes=("n",),
        make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
        reference=lambda inp, p: {"out": 2.0 * inp["x"]},
        output_shapes=lambda p: {"out": (p["n"],)},
        flops=lambda p: p["n"], bytes_moved=lambda p, isz: 2 * p["n"] * isz,
        sizes={"quick": [{"n": 1000}, {"n": 4099}], "full": [{"n": 100000}]})


def _good(ctx):
    return lambda inp, out: np.multiply(inp["x"], 2, out=out["out"])


def _raises(ctx):
    def run(inp, out):
        raise ValueError("kernel exploded")
    return run


def _nan(ctx):
    def run(inp, out):
        out["out"][:] = np.nan
    return run


def _wrong(ctx):
    return lambda inp, out: np.multiply(inp["x"], 2.5, out=out["out"])


def _sleeps(ctx):
    return lambda inp, out: time.sleep(3)


def _oom(ctx):
    raise MemoryError("cannot allocate 1 TiB")


VARIANTS = [("raises", _raises), ("nan", _nan), ("wrong", _wrong), ("sleeps", _sleeps), ("oom", _oom),
            ("good", _good)]


@pytest.fixture(autouse=True)
def quick_environment(monkeypatch):
    """The real environment record probes every runtime (seconds); the CLI tests exercise it."""
    env = lambda: ("testenv", {"host": "test"})  # noqa: E731
    monkeypatch.setattr("workbench.sweep.driver.current_environment", env)
    monkeypatch.setattr("workbench.roofs.peaks.current_environment", env)


@pytest.fixture
def test_kernel():
    catalog.register_kernel(_spec())
    for name, build in VARIANTS:
        catalog.register_variant(Variant(KERNEL, name, ("numpy",), build))
    catalog.register_variant(Variant(KERNEL, "f64only", ("numpy",), _good, dtypes=("float64",)))
    catalog.register_variant(Variant(KERNEL, "fused", ("numpy",), _good, mode="fused"))
    catalog.register_variant(Variant(KERNEL, "compiled", ("numpy",), _good, mode="compiled"))
    catalog.register_variant(Variant(KERNEL, "other-runtime", ("numba",), _good))
    yield KERNEL
    catalog.unregister_kernel(KERNEL)


def test_failures_are_isolated_and_the_sweep_goes_on(test_kernel, tmp_path):
    names = [n for n, _ in VARIANTS]
    spec = SweepSpec(kernels=[KERNEL], variants=names, backends=["numpy"], sizes=[(1000,)], timeout_s=1.5, **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    statuses = [(r["variant"], r["status"]) for r in out.rows]
    assert statuses == [("raises", "error"), ("nan", "incorrect"), ("wrong", "incorrect"), ("sleeps", "timeout"),
                        ("oom", "oom"), ("good", "ok")]
    rows = {r["variant"]: r for r in out.rows}
    assert "kernel exploded" in rows["raises"]["message"] and "ValueError" in rows["raises"]["traceback"]
    assert "non-finite" in rows["nan"]["message"] and rows["nan"]["n_samples"] is None
    assert rows["wrong"]["max_error"] > rows["wrong"]["tolerance"]
    assert "MemoryError" in rows["oom"]["message"]
    assert rows["sleeps"]["wall_s"] < 2.9  # the 3 s call was abandoned at the 1.5 s limit
    assert rows["good"]["median_s"] > 0
    stored = Store(tmp_path / "s.sqlite").results([out.run_id])
    assert sorted(stored["variant"]) == sorted(names)
    assert Store(tmp_path / "s.sqlite").run(out.run_id)["status"] == "finished"


def test_cells_follow_the_axes(test_kernel):
    spec = SweepSpec(kernels=[KERNEL], backends=["numpy"], dtypes=("float32", "float64"))
    cells = spec.cells()
    variants = {c.variant for c in cells}
    assert "compiled" not in variants and "other-runtime" not in variants  # mode / runtime filters
    assert {"fused", "good"} <= variants
    assert {c.params for c in cells} == {(("n", 1000),), (("n", 4099),)}  # the "quick" sizes
    f64 = [c for c in cells if c.variant == "f64only"]
    assert {c.dtype: c.unsupported is None for c in f64} == {"float32": False, "float64": True}
    assert len({c.key for c in cells}) == len(cells)
    runs = [g for i, g in enumerate((c.dtype, c.params) for c in cells)
            if i == 0 or g != (cells[i - 1].dtype, cells[i - 1].params)]
    assert len(runs) == len(set(runs))  # cells sharing inputs are neighbours

    both = SweepSpec(kernels=[KERNEL], variants=["good"], backends=["numpy"], cache=("hot", "cold"), sizes="full")
    assert [(c.cache, c.params) for c in both.cells()] == [("hot", (("n", 100000),)), ("cold", (("n", 100000),))]

    named = SweepSpec(kernels=[KERNEL], variants=["compiled", "other-runtime"], backends=["numpy"], sizes=[(8,)])
    by_variant = {c.variant: c for c in named.cells()}
    assert by_variant["compiled"].unsupported is None  # a named variant runs whatever its mode
    assert "runs on numba" in by_variant["other-runtime"].unsupported


def test_a_named_backend_without_variants_gets_one_unsupported_cell(test_kernel):
    require_backend("numba")
    catalog.register_kernel(KernelSpec(**{**_spec().__dict__, "name": "wbtest_numpy_only", "path": None}))
    catalog.register_variant(Variant("wbtest_numpy_only", "good", ("numpy",), _good))
    try:
        spec = SweepSpec(kernels=["wbtest_numpy_only"], backends=["numpy", "numba"], sizes=[(64,), (128,)])
        numba_cells = [c for c in spec.cells() if c.backend == "numba"]
        assert len(numba_cells) == 1 and numba_cells[0].variant == NO_VARIANT  # once, not once per size
        assert "no variant for runtime 'numba'" in numba_cells[0].unsupported
        quiet = SweepSpec(kernels=["wbtest_numpy_only"], sizes=[(64,)])  # backends not named: no such cells
        assert all(c.variant != NO_VARIANT for c in quiet.cells())
    finally:
        catalog.unregister_kernel("wbtest_numpy_only")
    named = SweepSpec(kernels=[KERNEL], variants=["good"], backends=["numba"], sizes=[(64,), (128,)])
    assert all("runs on numpy" in c.unsupported for c in named.cells())


def test_bad_names_list_the_valid_choices(test_kernel):
    for kw, word in ((dict(kernels=["nope"]), "valid kernels"), (dict(variants=["nope"]), "valid variants"),
                     (dict(backends=["nope"]), "valid backends"), (dict(dtypes=("float8",)), "valid dtypes"),
                     (dict(modes=("lazy",)), "valid modes"), (dict(cache="warm"), "valid cache modes")):
        with pytest.raises(ValueError, match=word):
            SweepSpec(**{"kernels": [KERNEL], **kw}).cells()
    with pytest.raises(ValueError, match="takes 1 size"):
        SweepSpec(kernels=[KERNEL], sizes=[(4, 4)]).cells()
    with pytest.raises(ValueError, match="valid suites"):
        suite_spec("medium")


def test_sizes_by_arity_and_by_name(test_kernel):
    spec = SweepSpec(kernels=[KERNEL, "softmax"], variants=["good", "numpy"], backends=["numpy"],
                     sizes=[(77,), (3, 5), {"n": 9}])
    got = {(c.kernel, c.params) for c in spec.cells()}
    assert got == {(KERNEL, (("n", 77),)), (KERNEL, (("n", 9),)), ("softmax", (("rows", 3), ("cols", 5)))}


@pytest.fixture
def plain_rounds(monkeypatch):
    """Only the spec's rounds: no reserve, so no A/A twin and no extra round of an undecided pair, whose
    visits depend on the noise (they are tested in test_verdicts_rounds); these tests count visits."""
    monkeypatch.setattr("workbench.sweep.plan.RESERVE_ROUNDS", 0)


def test_should_stop_stops_after_the_current_cell_and_resume_finishes(test_kernel, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    spec = SweepSpec(kernels=[KERNEL], variants=["good", "fused"], backends=["numpy"],
                     sizes=[(100,), (200,), (300,)], rounds=1, **FAST)
    seen = []
    out = run_sweep(spec, store=store, progress=False, should_stop=lambda: len(seen) >= 2,
                    on_cell=lambda row, i, n: seen.append((i, n)))
    assert out.interrupted and len(out.rows) == 2 and seen == [(0, 6), (1, 6)]
    assert store.run(out.run_id)["status"] == "interrupted"
    again = run_sweep(None, store=store, resume_run_id=out.run_id, progress=False,
                      on_cell=lambda row, i, n: seen.append((i, n)))
    assert not again.interrupted and again.run_id == out.run_id and len(again.rows) == 4
    assert [i for i, _ in seen] == list(range(6))
    df = store.results([out.run_id])
    assert len(df) == 6 and df["cell_key"].is_unique and set(df["rounds"]) == {1}
    assert store.run(out.run_id)["status"] == "finished"
    nothing = run_sweep(None, store=store, resume_run_id=out.run_id, progress=False)
    assert nothing.rows == [] and len(store.results([out.run_id])) == 6


def test_rounds_interrupted_mid_round_resume_to_every_cell_once_with_every_round(test_kernel, tmp_path, plain_rounds):
    store = Store(tmp_path / "s.sqlite")
    spec = SweepSpec(kernels=[KERNEL], variants=["good", "fused"], backends=["numpy"],
                     sizes=[(100,), (200,), (300,)], rounds=3, **FAST)
    seen = []
    out = run_sweep(spec, store=store, progress=False, should_stop=lambda: len(seen) >= 8,
                    on_cell=lambda row, i, n: seen.append((row["cell_key"], row["rounds"], i, n)))
    # progress is counted in cells: 8 of 18 visits = 2.67 of 6 cells
    assert out.interrupted and [i for *_, i, n in seen] == [0, 0, 0, 1, 1, 1, 2, 2] and {n for *_, n in seen} == {6}
    df = store.results([out.run_id])
    assert len(df) == 6 and sorted(df["rounds"]) == [1, 1, 1, 1, 2, 2]  # round 2 was under way
    again = run_sweep(None, store=store, resume_run_id=out.run_id, progress=False,
                      on_cell=lambda row, i, n: seen.append((row["cell_key"], row["rounds"], i, n)))
    assert not again.interrupted and len(again.rows) == 6
    assert len(seen) == 18 and [i for *_, i, _ in seen][-1] == 5  # every cell once per round, no more
    df = store.results([out.run_id])
    assert len(df) == 6 and df["cell_key"].is_unique and set(df["rounds"]) == {3}
    assert all(len(json.loads(m)) == 3 for m in df["round_medians_s"])
    assert store.run(out.run_id)["status"] == "finished"


def test_rounds_pool_samples_and_take_the_median_of_round_medians(test_kernel, tmp_path, plain_rounds):
    spec = SweepSpec(kernels=[KERNEL], variants=["good", "fused"], backends=["numpy"], sizes=[(1000,), (4099,)],
                     rounds=3, **FAST)
    visits = []
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False,
                    on_cell=lambda row, i, n: visits.append(row["cell_key"]))
    assert len(visits) == 12 and [r["cell_key"] for r in out.rows] == [c.key for c in spec.cells()]
    for row in out.rows:
        assert row["status"] == "ok" and row["rounds"] == 3
        medians = json.loads(row["round_medians_s"])
        samples = json.loads(row["samples_s"])
        # the headline is the median of the rounds, or of the mode most rounds fell in when they split in two, over
        # the rounds taken with the host at speed (a round the slow host stretched is set aside: host_settle)
        at_speed = rounds_at_speed(medians, json.loads(row["round_host_slowdowns"] or "[]"))
        assert len(medians) == 3 and row["median_s"] == pytest.approx(mode_median(at_speed))
        assert len(samples) == row["n_samples"] >= 3 * 3  # a per-round minimum of samples
        sizes = json.loads(row["round_sizes"])  # each round weighs the same in the quartiles
        assert sum(sizes) == len(samples) and len(sizes) == 3
        slowdowns = json.loads(row["round_host_slowdowns"] or "[]")  # quartiles and noise: the rounds at speed too
        assert row["q1_s"] == pytest.approx(round_weighted_quartiles(*_at_speed(samples, sizes, medians, slowdowns))[0])
        assert row["gbps"] == pytest.approx(row["bytes"] / row["median_s"] / 1e9)
        assert row["noise"] == pytest.approx(verdicts.rel_spread(at_speed))
        assert isinstance(row["noisy"], bool) and row["noise_note"] is not None
        assert row["first_call_s"] > 0 and row["peak_mem_bytes"]  # from the first round
        assert row["load_avg_1m"] is not None and 0 <= row["other_cpu_share"] <= 1
    stored = Store(tmp_path / "s.sqlite").results([out.run_id])
    assert list(stored["cell_key"]) == [c.key for c in spec.cells()]  # stored in the sweep's order


def test_round_order_is_shuffled_per_round_and_reproducible(test_kernel, tmp_path, plain_rounds):
    spec = SweepSpec(kernels=[KERNEL], variants=["good", "fused"], backends=["numpy"],
                     sizes=[(10,), (20,), (30,), (40,), (50,)], rounds=4, seed=7, **FAST)
    orders = []
    for name in ("a", "b"):
        seen = []
        run_sweep(spec, store=tmp_path / f"{name}.sqlite", progress=False,
                  on_cell=lambda row, i, n, seen=seen: seen.append(row["cell_key"]))
        orders.append([seen[r * 10:(r + 1) * 10] for r in range(4)])
    natural = [c.key for c in spec.cells()]
    assert orders[0] == orders[1]  # the same seed, the same orders
    assert orders[0][0] == natural  # round 1 in the spec's order: rows are stored in it
    assert all(sorted(o) == sorted(natural) for o in orders[0])
    assert len({tuple(o) for o in orders[0]}) == 4  # every round in its own order
    for order in orders[0]:  # cells sharing inputs stay neighbours
        sizes = [dict(c.params)["n"] for k in order for c in spec.cells() if c.key == k]
        assert all(sizes[i] == sizes[i + 1] for i in range(0, 10, 2))


def test_failed_cells_are_not_measured_again(test_kernel, tmp_path, plain_rounds):
    spec = SweepSpec(kernels=[KERNEL], variants=["raises", "nan", "good"], backends=["numpy"], sizes=[(100,)],
                     rounds=3, **FAST)
    visits = []
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False,
                    on_cell=lambda row, i, n: visits.append((row["variant"], i, n)))
    assert sorted(v for v, *_ in visits) == ["good", "good", "good", "nan", "raises"]
    assert visits[-1][1:] == (2, 3)  # the rounds a failed cell skips count as done
    assert {r["variant"]: r["status"] for r in out.rows} == {"raises": "error", "nan": "incorrect", "good": "ok"}


def test_a_cell_failing_in_a_later_round_ends_with_that_status(test_kernel, tmp_path):
    builds = {"n": 0}

    def flaky(ctx):
        builds["n"] += 1
        factor = 2.0 if builds["n"] <= 2 else 2.5  # right in rounds 1 and 2, wrong in round 3
        return lambda inp, out: np.multiply(inp["x"], factor, out=out["out"])

    catalog.register_variant(Variant(KERNEL, "flaky", ("numpy",), flaky))
    # in-process: the build counter is this process's (a worker would count its own copy)
    spec = SweepSpec(kernels=[KERNEL], variants=["flaky"], backends=["numpy"], sizes=[(100,)], rounds=3,
                     isolation="in-process", **FAST)
    row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
    # the last round finds it wrong (audits check every round: tests/unit/test_gaming.py has one wrong from round 2)
    assert row["status"] == "incorrect" and "after timing" in row["message"]
    assert row["rounds"] == 2 and row["n_samples"] >= 6  # earlier rounds' timings are kept, flagged by the status
    assert builds["n"] == 3


def test_old_specs_without_rounds_resume_with_one_round():
    assert SweepSpec.from_dict({"kernels": ["saxpy"]}).rounds == 1
    assert SweepSpec.from_dict({"kernels": ["saxpy"], "rounds": 5}).rounds == 5
    assert suite_spec("quick").rounds >= 1 and suite_spec("quick", rounds=2).rounds == 2
    with pytest.raises(ValueError, match="rounds 0 is out of range: it must be an integer >= 1"):
        SweepSpec(rounds=0).n_rounds()


def test_ctrl_c_keeps_finished_cells(test_kernel, tmp_path):
    def interrupt(row, i, n):
        if i == 1:
            raise KeyboardInterrupt

    spec = SweepSpec(kernels=[KERNEL], variants=["good"], backends=["numpy"], sizes=[(10,), (20,), (30,)], rounds=1,
                     **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False, on_cell=interrupt)
    assert out.interrupted and len(out.rows) == 2
    st = Store(tmp_path / "s.sqlite")
    assert len(st.results([out.run_id])) == 2 and st.run(out.run_id)["status"] == "interrupted"


def test_spec_round_trips_through_json(test_kernel):
    spec = suite_spec("quick", kernels=[KERNEL], sizes=[(5,), {"n": 6}])
    back = SweepSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert [c.key for c in back.cells()] == [c.key for c in spec.cells()]
    assert back.suite == "quick" and back.budget_s == spec.budget_s


def test_llm_shapes_cross_the_axes():
    shapes = llm_shapes(batch_sizes=[1, 2], seq_lengths=[16], hidden_sizes=[768, 1234])
    hidden = {s["hidden"] for s in shapes}
    assert hidden == {768, 1234} and {s["batch"] for s in shapes} == {1, 2}
    synthetic = [s for s in shapes if s["hidden"] == 1234]
    assert synthetic and synthetic[0]["intermediate"] == 4 * 1234
    spec = suite_spec("llm", kernels=["saxpy", "rmsnorm"], backends=["numpy"], batch_sizes=[1], seq_lengths=[16],
                      hidden_sizes=[768])
    params = {(c.kernel, c.params) for c in spec.cells()}
    assert ("saxpy", (("n", 16 * 768),)) in params
    assert ("rmsnorm", (("rows", 16), ("cols", 768))) in params


def test_measured_peaks_give_percent_of_peak(test_kernel, tmp_path, monkeypatch):
    from workbench.roofs import peaks
    from workbench.roofs import probe as roof_probe

    # repeats that disagree (a busy machine) make the probe refuse: right, but not what this test checks, and a CI
    # running three test jobs on two cores made it refuse there
    monkeypatch.setattr(roof_probe, "UNSTABLE_SPREAD", float("inf"))
    monkeypatch.setattr(roof_probe, "FAR_BELOW", 0.0)  # nor one far below the roof it must exceed (its own test)

    monkeypatch.setattr(peaks, "_stream_elements", lambda backend: 1 << 16)
    monkeypatch.setattr(peaks, "_largest_gemm", lambda backend: 64)
    monkeypatch.setattr(peaks, "PROBE_CONFIG", peaks.TimingConfig(warmup_s=0.005, budget_s=0.05, n_inputs=1))
    store = Store(tmp_path / "s.sqlite")
    found = peaks.measure_peaks(["numpy"], store)
    bw = [p for p in found if p.metric == "bandwidth_gbps"]
    assert len(bw) == 1 and bw[0].value > 0 and "STREAM triad" in bw[0].method  # issue 22: a vectorized triad
    flops = {p.dtype: p for p in found if p.metric == "gflops"}
    assert set(flops) == {"float32", "float64"}
    if any("numpy" in v.runtimes for v in catalog.variants("gemm").values()):  # the CPU's one roof set (issue 22)
        assert flops["float32"].value > 0 and "BLAS GEMM" in flops["float32"].method
    assert len(store.peaks()) == sum(p.value is not None for p in found)
    spec = SweepSpec(kernels=["saxpy"], variants=["numpy"], backends=["numpy"], sizes=[(1 << 16,)], **FAST)
    row = run_sweep(spec, store=store, progress=False).rows[0]
    assert row["status"] == "ok"
    # scored against the measured roof of the memory level its working set fits (DRAM or a cache level)
    levels = {p.value for p in found if p.unit == "GB/s" and p.value is not None}
    assert row["ceiling_gbps"] in levels or any(row["ceiling_gbps"] == pytest.approx(v) for v in levels)
    assert row["pct_peak_bw"] == pytest.approx(100 * row["gbps"] / row["ceiling_gbps"])

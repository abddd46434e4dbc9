"""The shape-keyed execution cache of block variants: its statistics, fallbacks, limits, and how they reach
rows, reports and the public API (numpy only: core dependencies)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import workbench
from workbench.backends import registry
from workbench.catalog.spec import MODES, BuildContext
from workbench.core.record import RESULT_COLUMNS
from workbench.execution import CacheKey, ExecutionCache, clear_cache, execution_stats, row_stats
from workbench.execution.replay import ReplayTable
from workbench.measure.cell import Cell, CheckOnly, run_cell
from workbench.measure.rounds import merge_rounds
from workbench.report.row_notes import exec_cache_text
from workbench.sweep.selection import DEFAULT_MODES

KEY = CacheKey.of("blk", "v-graph", "numpy", {"n": 3}, "float32")


def counting_recorder(result=1.0):
    calls = []

    def record():
        calls.append(1)
        return lambda inp, out: result
    return record, calls


def test_first_call_records_later_calls_hit():
    cache = ExecutionCache()
    record, calls = counting_recorder(5.0)
    assert [cache.run(KEY, "graph", record, {}, {}) for _ in range(4)] == [5.0] * 4
    assert len(calls) == 1
    stats = cache.get_stats()
    assert {k: stats[k] for k in ("size", "hits", "misses", "recordings", "fusion_attempts", "fallbacks")} == \
        {"size": 1, "hits": 3, "misses": 1, "recordings": 1, "fusion_attempts": 0, "fallbacks": 0}
    (entry,) = stats["entries"]
    assert entry["mode"] == "graph" and entry["hits"] == 3 and entry["shape"] == "n=3" and entry["record_s"] >= 0


def test_every_shape_dtype_and_variant_is_its_own_entry():
    cache = ExecutionCache()
    keys = [KEY, CacheKey.of("blk", "v-graph", "numpy", {"n": 4}, "float32"),
            CacheKey.of("blk", "v-graph", "numpy", {"n": 3}, "float64"),
            CacheKey.of("blk", "v-fused", "numpy", {"n": 3}, "float32")]
    for k in keys:
        cache.run(k, "graph", counting_recorder()[0], {}, {})
    assert cache.get_stats()["size"] == 4 and cache.misses == 4 and cache.hits == 0


def test_a_failed_fusion_falls_back_to_eager_and_is_counted():
    cache = ExecutionCache()

    def broken():
        raise RuntimeError("inductor said no")

    key = CacheKey.of("blk", "v-fused", "numpy", {"n": 3}, "float32")
    assert cache.run(key, "fused", broken, {}, {}, eager=lambda: (lambda i, o: "eager")) == "eager"
    assert cache.run(key, "fused", broken, {}, {}, eager=lambda: (lambda i, o: "eager")) == "eager"
    s = cache.get_stats()
    assert (s["fusion_attempts"], s["fusion_successes"], s["fallbacks"], s["recordings"], s["hits"]) == (1, 0, 1, 0, 1)
    assert s["entries"][0]["mode"] == "eager" and s["entries"][0]["requested"] == "fused"
    assert "inductor said no" in s["entries"][0]["fallback"]


def test_a_successful_fusion_counts_attempt_success_and_recording():
    cache = ExecutionCache()
    cache.run(KEY, "fused", counting_recorder()[0], {}, {}, eager=lambda: pytest.fail("eager must not be built"))
    s = cache.totals()
    assert (s["fusion_attempts"], s["fusion_successes"], s["recordings"], s["fallbacks"]) == (1, 1, 1, 0)


def test_a_failed_graph_recording_propagates_and_caches_nothing():
    cache = ExecutionCache()

    def broken():
        raise ValueError("capture failed")

    for _ in range(2):
        with pytest.raises(ValueError, match="capture failed"):
            cache.run(KEY, "graph", broken, {}, {}, eager=lambda: (lambda i, o: None))
    assert cache.get_stats()["size"] == 0 and cache.misses == 2 and cache.fallbacks == 0


def test_eager_is_not_a_recorded_mode_and_sizes_are_checked():
    with pytest.raises(ValueError, match="valid modes: graph, fused"):
        ExecutionCache().run(KEY, "eager", counting_recorder()[0], {}, {})
    with pytest.raises(ValueError, match="at least 1"):
        ExecutionCache(max_entries=0)


def test_least_recently_recorded_shapes_are_evicted():
    cache = ExecutionCache(max_entries=2)
    for n in range(3):
        cache.run(CacheKey.of("blk", "v", "numpy", {"n": n}, "float32"), "graph", counting_recorder()[0], {}, {})
    s = cache.get_stats()
    assert s["size"] == 2 and s["evictions"] == 1 and [e["shape"] for e in s["entries"]] == ["n=1", "n=2"]


def test_clear_zeroes_everything():
    cache = ExecutionCache()
    cache.run(KEY, "graph", counting_recorder()[0], {}, {})
    cache.clear()
    assert cache.get_stats() == {"size": 0, "hits": 0, "misses": 0, "recordings": 0, "fusion_attempts": 0,
                                 "fusion_successes": 0, "fallbacks": 0, "evictions": 0, "entries": []}


def test_public_api_and_modes():
    assert workbench.execution_stats is not None and "execution_stats" in workbench.__all__
    assert "clear_cache" in workbench.__all__
    assert "graph" in MODES and "graph" in DEFAULT_MODES and "compiled" not in DEFAULT_MODES
    assert "exec_cache" in RESULT_COLUMNS


def test_replay_table_captures_once_per_address_set():
    captured = []

    def capture(inp, out):
        captured.append(tuple(inp))
        return lambda: None

    table = ReplayTable(capture, address=id, limit=2)
    a, b = {"x": object()}, {"x": object()}
    for inputs in (a, a, b, b, a):
        table(inputs, {"out": None})
    assert table.captures == 2
    table({"x": object()}, {"out": None})  # a third address set starts the table over
    assert table.captures == 3


@pytest.fixture
def fresh_cache():
    clear_cache()
    yield
    clear_cache()


def test_the_builder_records_so_that_timed_calls_only_hit(fresh_cache):
    spec = workbench.get_kernel("mlp_block")
    v = workbench.variants("mlp_block")["numpy-graph"]
    params = {"tokens": 2, "hidden": 9, "intermediate": 13}
    ctx = BuildContext(registry.get("numpy"), params, "float32")
    run = v.build(ctx)
    after_build = execution_stats()
    assert (after_build["misses"], after_build["recordings"], after_build["hits"]) == (1, 1, 0)
    inp = spec.host_inputs(params, "float32", seed=3)
    out = {"out": np.full((2, 9), np.nan, np.float32)}
    run(inp, out)
    ref = spec.reference({k: v.astype(np.float64) for k, v in inp.items()}, params)["out"]
    assert np.abs(out["out"] - ref).max() < 1e-5 * np.abs(ref).max()
    v.build(ctx)  # a second build (another round) finds the recording
    s = execution_stats()
    assert (s["misses"], s["recordings"], s["hits"]) == (1, 1, 2)
    assert row_stats("mlp_block", "numpy-graph", "numpy", params, "float32")["shape_hits"] == 2
    assert row_stats("mlp_block", "numpy-eager", "numpy", params, "float32") is None


def test_rows_carry_the_cache_statistics_and_reports_show_them(fresh_cache):
    params = {"tokens": 1, "hidden": 17, "intermediate": 40}
    rows = {v: run_cell(Cell.make("mlp_block", v, "numpy", "float32", params, mode=m), CheckOnly(seeds=(0, 1)))
            for v, m in (("numpy-graph", "graph"), ("numpy-eager", "eager"))}
    assert rows["numpy-graph"]["status"] == "ok" and rows["numpy-eager"]["status"] == "ok"
    assert rows["numpy-eager"]["exec_cache"] is None
    stats = json.loads(rows["numpy-graph"]["exec_cache"])
    assert stats["mode"] == "graph" and stats["recordings"] == 1 and stats["shape_hits"] == 2  # two seeds
    text = exec_cache_text(rows["numpy-graph"]["exec_cache"])
    assert text.startswith("cache: graph, recorded in") and "2 hits on this shape" in text
    later = dict(rows["numpy-graph"], exec_cache=json.dumps({**stats, "shape_hits": 9}))
    first = dict(rows["numpy-graph"], samples_s="[1.0]", median_s=1.0)
    merged = merge_rounds(first, dict(later, samples_s="[1.0]", median_s=1.0, status="ok"))
    assert json.loads(merged["exec_cache"])["shape_hits"] == 9  # the last round's snapshot


def test_exec_cache_text_of_a_fallback_and_of_nothing():
    s = {"mode": "eager", "requested": "fused", "record_s": 0.5, "shape_hits": 3, "size": 1, "hits": 3,
         "misses": 1, "recordings": 0, "fusion_attempts": 1, "fusion_successes": 0, "fallbacks": 1}
    assert "eager (fell back from fused)" in exec_cache_text(json.dumps(s))
    assert exec_cache_text(None) == exec_cache_text("") == exec_cache_text("not json") == ""

"""The named suites: quick answers one question per kernel family at a cache and a DRAM size, the others stay
available, and ``workbench bench --list-suites`` lists them with cell counts and estimated times."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from workbench.catalog import registry as catalog
from workbench.sweep import suites
from workbench.sweep import working_sets as working_sets_module
from workbench.sweep.driver import SweepSpec
from workbench.sweep.suites import (
    QUICK_FAMILIES,
    QUICK_LLM_KERNELS,
    describe_suites,
    family_sizes,
    format_suites,
    quick_variants,
    suite_checks,
    suite_names,
    suite_spec,
    working_sets,
)

FAMILY_KERNELS = [k for _, k, _ in QUICK_FAMILIES]


@pytest.fixture(scope="module")
def quick_cells():
    return suite_spec("quick", backends=["numpy"]).cells()


def test_every_suite_is_listed():
    assert {"quick", "standard", "llm", "full"} <= set(suite_names())
    # standard is the previous quick suite: every kernel at its quick sizes, every variant of the default modes
    std = suite_spec("standard", kernels=["gemm"], backends=["numpy"]).cells()
    assert {c.params for c in std} == {tuple(catalog.get_kernel("gemm").validate_params(p).items())
                                       for p in catalog.get_kernel("gemm").sizes["quick"]}


def test_quick_family_kernels_run_at_a_cache_and_a_larger_size(quick_cells):
    ws = working_sets()
    assert ws.larger >= 8 * ws.cache and ws.dram >= ws.larger
    by_kernel = defaultdict(set)
    for c in quick_cells:
        by_kernel[c.kernel].add(c.params)
    for family, kernel, _ in QUICK_FAMILIES:
        spec = catalog.get_kernel(kernel)
        sizes = sorted(by_kernel[kernel], key=lambda p: spec.bytes_moved(dict(p), 4))
        assert len(sizes) == 2, (kernel, sizes)
        small, large = (spec.bytes_moved(dict(p), 4) for p in sizes)
        target = ws.dram if family in suites.DRAM_FAMILIES else ws.larger
        assert small <= ws.cache < large, (kernel, small, large)
        assert large <= target and (large > target / 2 or spec.flops(dict(sizes[1])) > suites.MAX_CALL_FLOPS / 8)
        if family in suites.DRAM_FAMILIES and ws.llc:  # the memory-bound families reach DRAM on this machine
            assert large > ws.llc, (kernel, large, ws.llc)


def test_llm_operators_run_at_one_model_shape(quick_cells):
    for kernel in QUICK_LLM_KERNELS:
        assert len({c.params for c in quick_cells if c.kernel == kernel}) == 1, kernel
    labels = suite_spec("quick", backends=["numpy"]).llm_labels()
    assert {k for k, _ in labels} == set(QUICK_LLM_KERNELS)
    seq = suites.quick_llm_shape()["seq"]
    assert {v for v in labels.values()} == {f"qwen2.5-0.5b b1 s{seq} kv512"} | {f"qwen2.5-0.5b b1 s{seq}"}


def test_the_llm_shape_keeps_every_operator_call_within_the_quick_suites_flops():
    """As the families' sizes do: the longest sequence whose every operator stays within MAX_CALL_FLOPS (64
    tokens made the MLP block 1.7 GFLOP a call, 41 s of PoCL and numba cells in a 121 s quick suite)."""
    from workbench.catalog import registry as catalog

    shape = suites.quick_llm_shape()
    assert shape["model"] == "qwen2.5-0.5b" and shape["kv_len"] == 512
    flops = {k: catalog.kernels()[k].flops(catalog.kernels()[k].llm_params(shape)) for k in QUICK_LLM_KERNELS}
    assert max(flops.values()) <= suites.MAX_CALL_FLOPS
    longer = [q for q in suites.QUICK_SEQ_LENGTHS if q > shape["seq"]]
    if longer:  # the next longer sequence would break the rule
        nxt = {**shape, "seq": min(longer)}
        assert max(catalog.kernels()[k].flops(catalog.kernels()[k].llm_params(nxt)) for k in QUICK_LLM_KERNELS
                   if catalog.kernels()[k].llm_params(nxt)) > suites.MAX_CALL_FLOPS


def test_the_reference_and_the_fastest_of_each_runtime():
    from workbench.backends import registry

    numpy = registry.get("numpy")
    assert [v.name for v in quick_variants("softmax", numpy)] == ["numpy"]  # the library call is the reference
    assert [v.name for v in quick_variants("bias_gelu", numpy)] == ["numpy-unfused"]
    # a block's reference, and numpy's fastest form of it beside it
    assert [v.name for v in quick_variants("mlp_block", numpy)] == ["numpy-eager", "numpy-graph"]

    class Runtime:  # the variant pick needs only a runtime name (no runtime imported)
        def __init__(self, runtime):
            self.runtime = runtime

    numba = Runtime("numba")
    assert [v.name for v in quick_variants("gemm", numba)] == ["numba-tiled"]  # not the naive teaching form
    assert [v.name for v in quick_variants("bias_gelu", numba)] == ["numba-fused"]
    assert [v.name for v in quick_variants("attention_decode", numba)] == ["numba-flash"]
    torch = Runtime("torch")
    assert [v.name for v in quick_variants("attention_prefill", torch)] == ["torch-sdpa"]
    assert [v.name for v in quick_variants("gemm", torch)] == ["torch"]  # never torch.compile
    assert [v.name for v in quick_variants("mlp_block", torch)] == ["torch-graph"]


def test_overrides_narrow_or_replace_the_plan():
    narrowed = suite_spec("quick", kernels=["softmax", "relu"], backends=["numpy"]).cells()
    assert {c.kernel for c in narrowed} == {"softmax", "relu"}
    assert len({c.params for c in narrowed if c.kernel == "softmax"}) == 2
    relu = catalog.get_kernel("relu")  # not in the plan: its quick sizes, every variant
    assert {c.params for c in narrowed if c.kernel == "relu"} == {
        tuple(relu.validate_params(p).items()) for p in relu.sizes["quick"]}
    explicit = suite_spec("quick", kernels=["softmax"], backends=["numpy"], sizes=[(8, 8)])
    assert explicit.parts is None and {c.params for c in explicit.cells()} == {(("rows", 8), ("cols", 8))}
    assert explicit.budget_s == suite_spec("quick").budget_s  # the suite's timing stays


def test_suite_checks_are_what_the_suite_measures():
    """``verify --suite`` checks these: per backend, the (kernel, variant, dtype) of the suite's cells only."""
    checks = suite_checks("quick", kernels=["softmax", "bias_gelu", "mlp_block"], backends=["numpy"])
    assert checks == {"numpy": {("softmax", "numpy", "float32"), ("bias_gelu", "numpy-unfused", "float32"),
                                ("mlp_block", "numpy-eager", "float32"), ("mlp_block", "numpy-graph", "float32")}}
    cells = suite_spec("quick", backends=["numpy"]).cells()
    assert suite_checks("quick", backends=["numpy"]) == {"numpy": {(c.kernel, c.variant, c.dtype) for c in cells}}


def test_quick_spec_round_trips_through_json():
    spec = suite_spec("quick", backends=["numpy"])
    back = SweepSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert [c.key for c in back.cells()] == [c.key for c in spec.cells()]
    assert back.llm_labels() == spec.llm_labels()


def test_family_sizes_follow_the_working_sets():
    spec = catalog.get_kernel("saxpy")
    small, large = family_sizes(spec, 2**20, 2**26)
    assert spec.bytes_moved(small, 4) <= 2**20 < spec.bytes_moved(large, 4) <= 2**26
    assert spec.bytes_moved(large, 4) > 2**25  # near the target, not far below it
    gemm = catalog.get_kernel("gemm")
    for p in family_sizes(gemm, 2**20, 2**30):
        assert gemm.flops(p) <= suites.MAX_CALL_FLOPS and p["m"] == p["n"] == p["k"]


def test_working_sets_come_from_the_caches(monkeypatch):
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (512 * 2**10, 8 * 2**20))
    ws = working_sets()
    assert (ws.cache, ws.larger, ws.dram) == (256 * 2**10, 16 * 2**20, 16 * 2**20)  # half the core's; twice the LLC
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (2 * 2**20, 260 * 2**20))
    ws = working_sets()
    assert (ws.cache, ws.larger, ws.dram) == (2**20, suites.MAX_LARGE_WORKING_SET, 520 * 2**20)
    assert "capped" in suites.quick_sizes_note()


def test_the_sizes_note_never_says_twice_the_cache_of_a_set_that_is_not(monkeypatch):
    """Issue 38: a 32 MiB last-level cache read "32 MiB (twice the 32 MiB last-level cache)"."""
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (512 * 2**10, 32 * 2**20))
    note = suites.quick_sizes_note()
    assert "the others at 32 MiB (past the per-core cache; twice the last-level cache would be 64 MiB" in note
    assert "saxpy and sum (memory-bound) at 64 MiB (twice the 32 MiB last-level cache: from DRAM)" in note
    assert "serve all of it" in note
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (512 * 2**10, 8 * 2**20))
    assert suites.quick_sizes_note().endswith("the others at 16 MiB (twice the 8 MiB last-level cache: from DRAM)")
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (2 * 2**20, 24 * 2**20))  # capped under 2x
    assert "serve part of it" in suites.quick_sizes_note()
    monkeypatch.setattr(working_sets_module, "cache_sizes", lambda: (2 * 2**20, 512 * 2**10))  # 8x the smaller set
    assert "more than twice the 512 KiB last-level cache" in suites.quick_sizes_note()


def test_a_working_set_leaves_a_cache_only_when_larger_than_it():
    """Issue 39 (10): a 1 MiB KV cache was "as large as the 1 MiB per-core cache" on its size line and "leaves the
    1 MiB per-core cache" on its step: the place and the steps read one rule (larger than: past_llc's)."""
    ws = working_sets_module.WorkingSets(1, 1, 1, 2**20, 32 * 2**20)
    assert [ws.caches_left(n) for n in (2**18, 2**20, 2**20 + 1, 32 * 2**20, 33 * 2**20)] == [0, 0, 1, 1, 2]
    assert ws.cache_place(2**20) == "as large as the 1 MiB per-core cache"
    assert ws.cache_place(4 * 2**20) == "within the 32 MiB last-level cache"
    assert ws.cache_place(32 * 2**20) == "as large as the 32 MiB last-level cache"
    assert ws.cache_place(64 * 2**20) == "past the 32 MiB last-level cache (DRAM)"
    for n in (2**20, 32 * 2**20):   # as large as a cache never also leaves it
        assert ws.caches_left(n) == ws.caches_left(n - 1)
    assert working_sets_module.WorkingSets(1, 1, 1, None, None).cache_place(2**20) == "cache sizes unknown"


def test_list_suites_prints_counts_and_estimates():
    rows = describe_suites(["quick", "standard"])
    assert [r["suite"] for r in rows] == ["quick", "standard"]
    assert 0 < rows[0]["cells"] < rows[1]["cells"] and 0 < rows[0]["estimate_s"] < rows[1]["estimate_s"]
    text = format_suites(rows)
    assert "quick" in text and str(rows[0]["cells"]) in text and "min" in text or " s " in text
    assert "per-core cache" in text


def test_bench_list_suites_flag(capsys, monkeypatch):
    from workbench.cli import main

    monkeypatch.setattr(suites, "describe_suites", lambda names=None: [
        {"suite": "quick", "about": "x", "cells": 7, "runnable": 7, "estimate_s": 12.0}])
    assert main(["bench", "--list-suites"]) == 0
    out = capsys.readouterr().out
    assert "quick" in out and " 7 " in out and "~12 s" in out


def test_planning_a_suite_reads_the_model_shapes_without_pandas(run_python):
    """A sweep's parent plans the quick and llm suites from the shapes CSV read with the csv module (pandas
    cost every ``bench --suite`` parent 0.4-0.5 s and ~40 MB); the records match the pandas table's."""
    done = run_python(code=(
        "import sys, json\n"
        "from workbench import suites, datasets\n"
        "suites.suite_spec('quick'); suites.llm_shapes()\n"
        "print(json.dumps('pandas' in sys.modules))\n"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "false"

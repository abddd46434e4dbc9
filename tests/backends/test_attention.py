"""Attention kernels on real backends: tile edges of the flash kernels, SDPA backends, memory growth."""

from __future__ import annotations

import pytest
from conftest import require_backend

from workbench.catalog import get_kernel, get_variant
from workbench.measure.case import Case
from workbench.measure.memory import peak_memory
from workbench.sweep.verification import verify

#: Sizes crossing the flash kernels' tiles (numba BQ = BK = 64, decode CHUNK = 256; portable BQ = BK = 16).
PREFILL_EDGES = [{"batch": 2, "heads": 3, "kv_heads": 1, "seq": 200, "head_dim": 9},
                 {"batch": 1, "heads": 4, "kv_heads": 2, "seq": 129, "head_dim": 16}]
DECODE_EDGES = [{"batch": 2, "heads": 6, "kv_heads": 2, "kv_len": 600, "head_dim": 24},
                {"batch": 1, "heads": 2, "kv_heads": 2, "kv_len": 257, "head_dim": 200}]


def _ok(backend, kernel, variant, sizes, dtype):
    # in-process, as in test_variants: these check answers at tile edges (isolation has its own tests); a worker
    # per call started a fresh interpreter with numpy, numba or PoCL each time (~2 s of a ~3 s call)
    (row,) = verify(backends=backend, kernels=kernel, variants=variant, dtypes=dtype, sizes=sizes, seeds=(0, 1),
                    isolation="in-process")
    assert row.status == "ok", f"{row.status}: {row.message} (params {row.params}, seed {row.seed})"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numba_flash_across_tiles(dtype):
    require_backend("numba")
    _ok("numba", "attention_prefill", "numba-flash", PREFILL_EDGES, dtype)
    _ok("numba", "attention_decode", "numba-flash", DECODE_EDGES, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_portable_flash_on_opencl_across_tiles(dtype):
    require_backend("opencl-0")
    _ok("opencl-0", "attention_prefill", "portable-flash", PREFILL_EDGES, dtype)
    _ok("opencl-0", "attention_decode", "portable-flash", DECODE_EDGES, dtype)


def test_portable_flash_refuses_wide_heads_with_the_reason():
    require_backend("opencl-0")
    (row,) = verify(backends="opencl-0", kernels="attention_prefill", variants="portable-flash", seeds=(0,),
                    sizes=[{"batch": 1, "heads": 1, "kv_heads": 1, "seq": 3, "head_dim": 129}], isolation="in-process")
    assert row.status == "unsupported" and "head_dim 129" in row.message


@pytest.mark.parametrize("kernel", ["attention_prefill", "attention_decode"])
def test_sdpa_backend_variants_on_cpu(kernel):
    """math and flash run on torch's CPU build; the others are unsupported there, naming the backend and torch's
    own words, never a silent fallback to another backend."""
    require_backend("torch-cpu")
    rows = {r.variant: r for r in verify(backends="torch-cpu", kernels=kernel, seeds=(0,), isolation="in-process",
                                         variants=["torch-sdpa", "torch-sdpa-math", "torch-sdpa-flash",
                                                   "torch-sdpa-efficient", "torch-sdpa-cudnn", "torch-naive"])}
    for name in ("torch-sdpa", "torch-sdpa-math", "torch-sdpa-flash", "torch-naive"):
        assert rows[name].status == "ok", rows[name].message
    for name, member in (("torch-sdpa-efficient", "EFFICIENT_ATTENTION"), ("torch-sdpa-cudnn", "CUDNN_ATTENTION")):
        assert rows[name].status == "unsupported"
        assert f"SDPBackend.{member}" in rows[name].message and "torch says" in rows[name].message


def _extra_peak(variant: str, backend: str, seq: int) -> int:
    """Extra memory (beyond inputs and outputs) of one call, as the harness measures it for a row."""
    p = {"batch": 1, "heads": 4, "kv_heads": 1, "seq": seq, "head_dim": 32}
    case = Case(get_kernel("attention_prefill"), get_variant("attention_prefill", variant),
                require_backend(backend), p, "float32")
    case.run()
    extra, method = peak_memory(case.backend, case.run)
    assert extra is not None, method
    return extra


def test_flash_memory_does_not_grow_with_the_scores():
    """seq 512 -> 2048: the scores (4 heads x seq^2 float32) grow from 4 to 64 MiB. numpy-naive's extra memory
    follows them; numba-flash's stays far below one score matrix (its scratch does not depend on seq)."""
    require_backend("numpy")
    require_backend("numba")
    scores = 4 * 2048 * 2048 * 4
    naive = _extra_peak("numpy-naive", "numpy", 2048)
    assert naive > scores
    assert _extra_peak("numba-flash", "numba", 2048) < scores / 16


def test_bad_grouping_is_a_clear_error():
    require_backend("numba")
    with pytest.raises(ValueError, match="not a multiple of kv_heads"):
        Case(get_kernel("attention_decode"), get_variant("attention_decode", "numba-flash"), require_backend("numba"),
             {"batch": 1, "heads": 6, "kv_heads": 4, "kv_len": 8, "head_dim": 8}, "float32")

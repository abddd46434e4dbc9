"""Every numpy, numba and torch-cpu variant in the catalog passes verification at the spec's odd sizes.

Parametrised from the catalog itself, so a new variant is tested the day it is
added. float32 everywhere; the half precisions where a variant declares them;
float64 for numpy and torch, and for the numba kernels whose float64 path is
different code (polynomial exp64, libm erf). One torch.compile variant is
compiled for real, at one size (it costs ~10-30 s on two cores).

The float32 cases read their rows of the catalog's verify (conftest's ``catalog_verify``: the same variants,
the same 'verify' sizes, seeds 0-2 where these ran 0-1, float32, a worker process per backend), run once per
test run for test_done_criteria, instead of verifying the same cells again in this process.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from workbench.backends import all_backends
from workbench.catalog import kernels, variants
from workbench.sweep.verification import verify

CPU_BACKENDS = {"numpy": "numpy", "numba": "numba", "torch": "torch-cpu"}
SEEDS = (0, 1)


def _backend_or_skip(runtime: str) -> str:
    name = CPU_BACKENDS[runtime]
    b = all_backends().get(name)
    if b is None or not b.probe().available:
        pytest.skip(f"backend {name} unavailable: {b.probe().reason if b else 'not registered'}")
    return name


def _cases(dtypes_for):
    out = []
    for k in sorted(kernels()):
        for v in sorted(variants(k).values(), key=lambda v: v.name):
            if v.mode == "compiled":
                continue
            for rt in v.runtimes:
                if rt in CPU_BACKENDS:
                    for d in dtypes_for(rt, v, k):
                        out.append(pytest.param(k, v.name, rt, d, id=f"{k}-{v.name}-{d}"))
    return out


def _float32(rt, v, k):
    return ["float32"]


def _halves(rt, v, k):
    declared = v.dtypes or ("float16", "bfloat16", "float32", "float64")
    possible = {"numpy": ("float16",), "torch": ("float16", "bfloat16"), "numba": ()}[rt]
    return [d for d in possible if d in declared]


NUMBA_FLOAT64 = {"gelu_tanh", "gelu_erf", "silu", "softmax", "bias_gelu", "sum", "gemm", "geglu"}


def _float64(rt, v, k):
    if rt == "numba" and k not in NUMBA_FLOAT64:
        return []
    if v.dtypes is not None and "float64" not in v.dtypes:  # a declared restriction (e.g. an op without float64)
        return []
    return ["float64"]


#: SDPA backends torch's CPU build lacks: the attention variants forcing them are unsupported there, with
#: torch's reason (tests/backends/test_attention.py checks that); they run where the device has them.
DEVICE_ONLY = {"torch-sdpa-efficient", "torch-sdpa-cudnn", "torch-sdpa-overrideable"}


#: Cells a variant reports unsupported at the verify sizes for a measured reason: asserted as such.
KNOWN_UNSUPPORTED = {("gemm_int8", "torch", "bfloat16"): "needs k a multiple of 16"}  # torch 2.13 CPU kernel
#: Execution modes a runtime lacks by design: the variant stands for the mode's row, unsupported with the reason.
UNSUPPORTED_MODES = {("mlp_block", "numpy-fused"), ("attention_block", "numpy-fused")}


def _assert_passes(kernel, name, runtime, dtype, seeds=SEEDS):
    backend = _backend_or_skip(runtime)
    # in-process: this checks each variant's answers (isolation has its own tests); a worker process per case
    # would start a fresh interpreter, torch and numba included, hundreds of times
    (row,) = verify(backends=backend, kernels=kernel, variants=name, dtypes=dtype, seeds=seeds, isolation="in-process")
    _assert_row(row, kernel, name, backend, dtype, len(seeds))


def _assert_row(row, kernel, name, backend, dtype, n_seeds):
    """``row`` (a verify result) passed, or is unsupported where and why this machine is known to lack it."""
    if (kernel, name, dtype) in KNOWN_UNSUPPORTED and backend == "torch-cpu":
        assert row.status == "unsupported" and KNOWN_UNSUPPORTED[kernel, name, dtype] in row.message, row.message
        return
    if (kernel, name) in UNSUPPORTED_MODES:
        assert row.status == "unsupported" and "no fused" in row.message, row.message
        return
    if row.status == "unsupported" and name in DEVICE_ONLY:
        pytest.skip(f"{name} on {backend}: {row.message}")
    assert row.status == "ok", f"{row.status}: {row.message} (params {row.params}, seed {row.seed})"
    assert row.trials == n_seeds * len(kernels()[kernel].sizes["verify"])


@pytest.mark.parametrize("kernel, name, runtime, dtype", _cases(_halves))
def test_variant_half_precision(kernel, name, runtime, dtype):
    _assert_passes(kernel, name, runtime, dtype, seeds=(0,))


@pytest.mark.parametrize("kernel, name, runtime, dtype", _cases(_float64))
def test_variant_float64(kernel, name, runtime, dtype):
    _assert_passes(kernel, name, runtime, dtype, seeds=(0,))


def test_every_kernel_has_numpy_numba_and_torch_variants():
    for k in kernels():
        runtimes = {rt for v in variants(k).values() for rt in v.runtimes}
        assert {"numpy", "numba", "torch"} <= runtimes, k
        assert any(v.library for v in variants(k).values()), f"{k}: no library baseline"


def test_fused_and_naive_tiled_pairs_exist():
    assert {"numba-fused", "numba-unfused", "numpy-unfused", "torch-unfused"} <= set(variants("bias_gelu"))
    assert {"numba-fused", "numba-unfused", "numpy-unfused", "torch-unfused"} <= set(variants("rmsnorm_residual"))
    assert variants("bias_gelu")["numba-fused"].mode == "fused"
    assert {"numba-naive", "numba-tiled"} <= set(variants("gemm"))
    assert {"numba-naive", "numba-tiled"} <= set(variants("transpose"))
    assert variants("gemm")["numpy"].library and variants("gemm")["torch"].library
    compiled = [v for k in kernels() for v in variants(k).values() if v.name == "torch-compile"]
    assert compiled and all(v.mode == "compiled" for v in compiled)


def test_gemm_tiled_handles_edges_and_multiple_panels():
    """Sizes that are not multiples of the tile (MR, NB) and k spanning several KC panels."""
    _backend_or_skip("numba")
    sizes = [{"m": 67, "n": 131, "k": 600}, {"m": 3, "n": 257, "k": 257}]
    (row,) = verify(backends="numba", kernels="gemm", variants="numba-tiled", sizes=sizes, seeds=(0,),
                    isolation="in-process")
    assert row.status == "ok", row.message


def test_transpose_tiled_handles_partial_tiles():
    _backend_or_skip("numba")
    sizes = [{"rows": 33, "cols": 65}, {"rows": 100, "cols": 31}]
    (row,) = verify(backends="numba", kernels="transpose", variants="numba-tiled", sizes=sizes, seeds=(0,),
                    isolation="in-process")
    assert row.status == "ok", row.message


def test_torch_compile_variant_really_compiles_and_passes():
    _backend_or_skip("torch")
    (row,) = verify(backends="torch-cpu", kernels="rmsnorm_residual", variants="torch-compile",
                    sizes=[{"rows": 5, "cols": 4097}], seeds=(0, 1), include_compiled=True, isolation="in-process")
    assert row.status == "ok", row.message


#: Seeds per size of the catalog's verify (`workbench verify`'s default, 0..2), which the float32 cases read.
CATALOG_VERIFY_SEEDS = 3


# Last in the file: pytest-xdist hands this file to a worker while another may still be running the catalog's
# verify (test_done_criteria); by the time these ask for it, it has usually finished.
@pytest.mark.timeout(1800)  # a hang guard as long as catalog_verify's, which this test may run or wait for
@pytest.mark.parametrize("kernel, name, runtime, dtype", _cases(_float32))
def test_variant_float32(kernel, name, runtime, dtype, catalog_verify):
    backend = _backend_or_skip(runtime)
    assert catalog_verify["stdout"].strip(), catalog_verify["stderr"][-2000:]
    rows = [r for r in json.loads(catalog_verify["stdout"])["results"]
            if (r["kernel"], r["variant"], r["backend"], r["dtype"]) == (kernel, name, backend, dtype)]
    assert len(rows) == 1, f"{kernel}/{name} on {backend} ({dtype}): {len(rows)} rows in the catalog's verify"
    _assert_row(SimpleNamespace(**rows[0]), kernel, name, backend, dtype, CATALOG_VERIFY_SEEDS)

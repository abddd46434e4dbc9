"""The CuPy library variants (kernels/*/cupy_variants.py).

What these tests check, and what they do not: each variant's computation lives
in a module-level ``make_run(xp, special)`` written against the
numpy-compatible array API. Here it is run with **numpy** (and scipy.special)
standing in for cupy on the spec's "verify" sizes and checked against the
float64 reference — that checks the composition (formula, out= use, float32
accumulation for float16, output dtypes), NOT execution on a GPU: cupy's
kernels, cuBLAS, CUB reductions and device-side casting are not exercised.
Without a CUDA device, ``verify(backends=["cupy"])`` must refuse the backend
with the probe's reason and verify nothing, never pass; on a machine
with a device the same test instead requires every variant to pass.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from workbench.backends.base import KNOWN_DTYPES
from workbench.catalog import get_kernel, kernels, variants
from workbench.core.dtypes import host_dtype
from workbench.measure.case import POISON, check, make_host_inputs, output_dtype, reference_outputs
from workbench.sweep.selection import BackendUnavailable
from workbench.sweep.verification import verify

OPS = ("saxpy", "vector_add", "relu", "gelu_tanh", "gelu_erf", "silu", "bias_gelu", "softmax", "layernorm",
       "rmsnorm", "rmsnorm_residual", "sum", "argmax", "transpose", "gemm",
       "swiglu", "geglu", "embedding", "gemm_int8", "gemm_fp8", "rope", "rope_interleaved",
       "attention_prefill", "attention_decode", "mlp_block", "attention_block")
#: The cupy composition is eager; where a fused form exists elsewhere it is named "-unfused", and attention's
#: (scores materialised, as against the flash kernels) "-naive".
NAME = {op: "cupy" for op in OPS} | {"bias_gelu": "cupy-unfused", "rmsnorm_residual": "cupy-unfused",
                                     "attention_prefill": "cupy-naive", "attention_decode": "cupy-naive",
                                     # "cupy" is one fused kernel there (tests/unit/test_cupy_fused.py)
                                     "gelu_tanh": "cupy-unfused", "softmax": "cupy-unfused",
                                     "rmsnorm": "cupy-unfused", "rope": "cupy-unfused"}
DTYPES = ("float16", "float32", "float64")


class _CupyCaps:
    """A stand-in cupy backend with CupyBackend's capabilities (the real one needs a device to report them)."""

    name, runtime = "cupy", "cupy"

    def capabilities(self):
        from workbench.backends.base import Capabilities

        return Capabilities(dtypes=("float16", "float32", "float64"))


def _module(op):
    kernels()  # loads the catalog, which registers workbench_catalog.<op>.*
    return importlib.import_module(f"workbench_catalog.{op}.cupy_variants")


def _numpy_run(op):
    special = None
    if op in ("gelu_erf", "geglu"):
        special = pytest.importorskip("scipy.special")
    return _module(op).make_run(np, special)


def _poisoned_outputs(spec, params, dtype):
    outs = {}
    for name, shape in spec.output_shapes(params).items():
        odt = output_dtype(spec, name, dtype)
        outs[name] = (np.full(shape, -7, dtype=odt) if odt.startswith("int")
                      else np.full(shape, POISON, dtype=host_dtype(odt)))
    return outs


def test_every_op_is_covered():
    assert set(OPS) == set(kernels())


# float16 silu: exp(-x) overflows to inf for x < -11 and x / inf = -0, the correct limit.
@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_composition_with_numpy_standin(op, dtype):
    """make_run(numpy) passes check() on every verify size and seed (the math, not the GPU)."""
    spec = get_kernel(op)
    run = _numpy_run(op)
    for params in spec.sizes["verify"]:
        for seed in (0, 1):
            host = make_host_inputs(spec, params, dtype, seed)
            ref = reference_outputs(spec, host, params)
            inputs = {k: v.copy() for k, v in host.items()}
            outs = _poisoned_outputs(spec, params, dtype)
            assert run(inputs, outs) is None, "cupy variants write into the preallocated outputs"
            res = check(spec, outs, ref, dtype, host, params)
            assert res.passed, f"{op} {dtype} {params} seed {seed}: {res.message or res.max_error}"
            for k in host:  # inputs are never modified in place
                np.testing.assert_array_equal(inputs[k], host[k])


@pytest.mark.parametrize("op", OPS)
def test_registered_for_the_cupy_runtime(op):
    v = variants(op)[NAME[op]]
    assert v.runtimes == ("cupy",)
    # dtypes default to the cupy backend's capabilities (float16/32/64: cupy has no bfloat16) instead of a
    # restated constant; what a cupy backend offers for the variant is still exactly DTYPES.
    assert v.dtypes is None
    assert tuple(d for d in KNOWN_DTYPES if v.unsupported_reason(_CupyCaps(), d) is None) == DTYPES
    assert v.mode == "eager" and v.library
    assert v.description
    assert v.build.__module__ == f"workbench_catalog.{op}.cupy_variants"


def test_verify_never_passes_without_a_device():
    """With cupy installed but no device, verify refuses the backend with the probe's reason and verifies
    nothing (as bench does); with one, every variant passes."""
    cupy = pytest.importorskip("cupy")
    run = lambda: verify(backends=["cupy"], variants=sorted(set(NAME.values())), dtypes=DTYPES, seeds=(0,))  # noqa: E731
    if cupy.cuda.is_available():
        rows = run()
        assert {(r.kernel, r.variant) for r in rows} == set(NAME.items())
        assert len(rows) == len(OPS) * len(DTYPES)
        bad = [(r.kernel, r.dtype, r.status, r.message) for r in rows if r.status != "ok"]
        assert not bad
    else:
        with pytest.raises(BackendUnavailable, match="backend 'cupy' is unavailable here: .+; available backends"):
            run()

"""The LLM operators of issue 14 (swiglu, geglu, embedding, gemm_int8, gemm_fp8, rope, rope_interleaved):
what the generic catalog tests (test_variants, test_portable, test_compile_check) cannot say.

- the quantised GEMMs' tolerance passes honest variants and fails deliberately wrong ones (scales ignored,
  codes off by half a step, weights dequantised through float16, codes read as unsigned);
- integer inputs (``input_dtypes``) reach every runtime in their own dtype, bfloat16 runs included;
- the fp8 decode/encode agree with torch's float8_e4m3fn on every byte;
- torch's int8 kernel is unsupported, with the reason, where it was measured to fail.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from tests.conftest import require_backend
from workbench.catalog import get_kernel, unregister_variant, variant
from workbench.sweep.verification import verify

SIZES = [{"m": 33, "n": 65, "k": 17}, {"m": 3, "n": 40, "k": 515}]


def _dequant(i, dtype):
    return (i["w"].astype(dtype) * i["scale"][:, None]).astype(dtype)


#: Wrong ways to compute gemm_int8 (numpy, float32 runs): each must come out incorrect.
WRONG = {
    "ignores-scales": lambda i: i["x"] @ i["w"].astype(np.float32).T,
    "half-step-off": lambda i: i["x"] @ ((i["w"].astype(np.float32) + 0.5) * i["scale"][:, None]).T,
    "float16-weights": lambda i: i["x"] @ _dequant(i, np.float16).astype(np.float32).T,
    "codes-unsigned": lambda i: i["x"] @ (i["w"].view(np.uint8).astype(np.float32) * i["scale"][:, None]).T,
    "one-scale-for-all": lambda i: i["x"] @ (i["w"].astype(np.float32) * i["scale"][0]).T,
}


@pytest.fixture
def wrong_int8_variants():
    names = []
    for name, fn in WRONG.items():
        vname = f"test-wrong-{name}"
        variant("gemm_int8", vname, "numpy")(lambda ctx, fn=fn: (lambda i, o: fn(i).astype(i["x"].dtype)))
        names.append(vname)
    yield names
    for vname in names:
        unregister_variant("gemm_int8", vname)


def test_int8_tolerance_fails_each_wrong_dequantisation(wrong_int8_variants):
    rows = verify(backends="numpy", kernels="gemm_int8", variants=wrong_int8_variants, sizes=SIZES,
                  seeds=(0,), isolation="in-process")
    assert {r.variant for r in rows} == set(wrong_int8_variants)
    for r in rows:
        assert r.status == "incorrect", (r.variant, r.status, r.message)
        assert "absolute mass" in r.message


@pytest.mark.parametrize("kernel", ["gemm_int8", "gemm_fp8"])
def test_quantised_gemm_numpy_passes_at_long_k(kernel):
    """k = 28672 (Llama-3-70B's down projection): BLAS float32 accumulation stays inside the tolerance."""
    (row,) = verify(backends="numpy", kernels=kernel, variants="numpy" if kernel == "gemm_int8" else "numpy-table",
                    sizes=[{"m": 2, "n": 24, "k": 28672}], seeds=(0,), isolation="in-process")
    assert row.status == "ok", row.message


def test_mass_error_holds_small_channels_to_the_same_standard():
    """An error of 1e-4 of a small-scale channel's mass fails although it is tiny next to max|out|."""
    from workbench.catalog.quantized import mass_error

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 64)), rng.integers(-127, 128, (2, 64)).astype(np.float64)
    scale = np.array([1.0, 1e-3])
    ref = x @ (w * scale[:, None]).T
    out = ref.copy()
    mass_small = (np.abs(x) @ np.abs(w[1]))[0] * scale[1]
    out[0, 1] += 1e-4 * mass_small
    assert mass_error(out, ref, x, w, scale) == pytest.approx(1e-4, rel=1e-6)
    assert 1e-4 * mass_small / np.abs(ref).max() < 2e-6  # the max-normalised error would have passed it


def test_fp8_codec_matches_torch_on_every_byte():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has no float8_e4m3fn")
    get_kernel("gemm_fp8")  # loads the catalog
    spec_module = importlib.import_module("workbench_catalog.gemm_fp8.spec")
    codes = np.arange(256, dtype=np.uint8)
    theirs = torch.from_numpy(codes).view(torch.float8_e4m3fn).to(torch.float64).numpy()
    np.testing.assert_array_equal(spec_module.decode_e4m3(codes), theirs)
    v = np.random.default_rng(1).standard_normal(20000) * np.float64(30.0)
    np.testing.assert_array_equal(spec_module.encode_e4m3(v),
                                  torch.from_numpy(v).to(torch.float8_e4m3fn).view(torch.uint8).numpy())


@pytest.mark.parametrize("kernel,name,dtype", [("embedding", "int64", "bfloat16"), ("gemm_int8", "int8", "bfloat16"),
                                               ("gemm_fp8", "uint8", "float16")])
def test_integer_inputs_keep_their_dtype_on_torch(kernel, name, dtype):
    torch = pytest.importorskip("torch")
    backend = require_backend("torch-cpu")
    spec = get_kernel(kernel)
    p = spec.sizes["verify"][1]
    dev = spec.example_inputs(backend, p, dtype)
    field = next(k for k, v in spec.input_dtypes.items() if v == name)
    assert dev[field].dtype == getattr(torch, name)
    floats = [v for k, v in dev.items() if k != field]
    assert all(v.dtype == getattr(torch, dtype) for v in floats)


def test_int8_torch_kernel_unsupported_in_bfloat16_at_ragged_k_with_reason():
    require_backend("torch-cpu")
    (row,) = verify(backends="torch-cpu", kernels="gemm_int8", variants="torch", dtypes="bfloat16",
                    sizes=[{"m": 3, "n": 16, "k": 17}], seeds=(0,), isolation="in-process")
    assert row.status == "unsupported" and "multiple of 16" in row.message
    (row,) = verify(backends="torch-cpu", kernels="gemm_int8", variants="torch", dtypes="bfloat16",
                    sizes=[{"m": 3, "n": 16, "k": 64}], seeds=(0,), isolation="in-process")
    assert row.status == "ok", row.message


def test_portable_int8_and_embedding_on_pocl():
    """The kernels reading int8 / int64 buffers, on PoCL, at sizes with ragged edges."""
    require_backend("opencl-0")
    rows = verify(backends="opencl-0", kernels=["gemm_int8", "embedding"],
                  sizes="verify", seeds=(0,), dtypes=["float32", "float64"], isolation="in-process")
    assert rows and all(r.status == "ok" for r in rows), [(r.kernel, r.variant, r.status, r.message) for r in rows]

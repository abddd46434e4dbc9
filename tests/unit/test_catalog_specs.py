"""Every spec in the catalog against the contract (kernels/README.md) and against independent math."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.backends.base import KNOWN_DTYPES
from workbench.catalog import get_kernel, kernels
from workbench.measure.case import make_host_inputs, reference_outputs

# kernel -> (axes, inputs, outputs): the table in kernels/README.md.
CONTRACT = {
    "saxpy": (("n",), {"x", "y"}, {"out"}),
    "vector_add": (("n",), {"a", "b"}, {"out"}),
    "relu": (("n",), {"x"}, {"out"}),
    "gelu_tanh": (("n",), {"x"}, {"out"}),
    "gelu_erf": (("n",), {"x"}, {"out"}),
    "silu": (("n",), {"x"}, {"out"}),
    "bias_gelu": (("rows", "cols"), {"x", "bias"}, {"out"}),
    "softmax": (("rows", "cols"), {"x"}, {"out"}),
    "layernorm": (("rows", "cols"), {"x", "weight", "bias"}, {"out"}),
    "rmsnorm": (("rows", "cols"), {"x", "weight"}, {"out"}),
    "rmsnorm_residual": (("rows", "cols"), {"x", "residual", "weight"}, {"out", "residual_out"}),
    "sum": (("n",), {"x"}, {"out"}),
    "argmax": (("rows", "cols"), {"x"}, {"out"}),
    "transpose": (("rows", "cols"), {"x"}, {"out"}),
    "gemm": (("m", "n", "k"), {"a", "b"}, {"out"}),
}
SMALL = {"n": {"n": 7}, "rows": {"rows": 3, "cols": 11}, "m": {"m": 5, "n": 3, "k": 4}}
LLM = {"batch": 2, "seq": 128, "hidden": 4096, "intermediate": 11008}


def small(spec):
    return dict(SMALL[spec.axes[0]])


def test_catalog_has_every_contract_kernel():
    assert set(CONTRACT) <= set(kernels())


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_spec_matches_contract(name):
    spec = get_kernel(name)
    axes, ins, outs = CONTRACT[name]
    assert spec.axes == axes
    p = small(spec)
    raw = spec.make_inputs(p, np.random.default_rng(0))
    assert set(raw) == ins
    assert all(v.dtype == np.float64 for v in raw.values())
    assert set(spec.output_shapes(p)) == outs
    ref = spec.reference(raw, p)
    assert {k: np.shape(v) for k, v in ref.items()} == spec.output_shapes(p)
    assert spec.bound in ("memory-bound", "compute-bound")
    assert set(spec.tolerances) >= set(KNOWN_DTYPES) or all(spec.tolerance(d) >= 0 for d in KNOWN_DTYPES)


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_make_inputs_deterministic_per_seed(name):
    spec = get_kernel(name)
    p = small(spec)
    a = spec.make_inputs(p, np.random.default_rng(5))
    b = spec.make_inputs(p, np.random.default_rng(5))
    c = spec.make_inputs(p, np.random.default_rng(6))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert any(not np.array_equal(a[k], c[k]) for k in a)


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_bytes_are_compulsory_traffic(name):
    """bytes_moved = every input read once + every output written once (int64 indices for argmax)."""
    spec = get_kernel(name)
    for p in (small(spec), spec.sizes["verify"][-1]):
        raw = spec.make_inputs(p, np.random.default_rng(0))
        for itemsize in (2, 4, 8):
            expect = sum(v.size for v in raw.values()) * itemsize
            for out, shape in spec.output_shapes(p).items():
                size = math.prod(shape)
                expect += size * (8 if spec.output_dtypes.get(out) == "int64" else itemsize)
            assert spec.bytes_moved(p, itemsize) == expect, (p, itemsize)


FLOPS_PER_ELEMENT = {"saxpy": 2, "vector_add": 1, "relu": 1, "gelu_tanh": 9, "gelu_erf": 5, "silu": 4,
                     "bias_gelu": 10, "softmax": 5, "layernorm": 7, "rmsnorm": 4, "rmsnorm_residual": 5,
                     "sum": 1, "argmax": 1, "transpose": 0}


@pytest.mark.parametrize("name", sorted(FLOPS_PER_ELEMENT))
def test_flops_per_element(name):
    spec = get_kernel(name)
    for p in spec.sizes["verify"] + spec.sizes["quick"]:
        assert spec.flops(p) == FLOPS_PER_ELEMENT[name] * math.prod(p.values())


def test_gemm_flops_and_bound():
    spec = get_kernel("gemm")
    assert spec.flops({"m": 33, "n": 65, "k": 17}) == 2 * 33 * 65 * 17
    assert spec.bound == "compute-bound"
    assert get_kernel("softmax").bound == "memory-bound"


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_size_lists(name):
    spec = get_kernel(name)
    assert {"verify", "quick", "full"} <= set(spec.sizes)
    for key in ("verify", "quick", "full"):
        for p in spec.sizes[key]:
            spec.validate_params(p)
    verify_sizes = spec.sizes["verify"]
    assert any(any(v % 2 for v in p.values()) for p in verify_sizes), "verify sizes must include odd ones"
    assert any(all(v == 1 for v in p.values()) for p in verify_sizes)
    largest = max(math.prod(p.values()) for p in spec.sizes["full"])
    if name == "gemm":
        assert max(p["m"] for p in spec.sizes["full"]) >= 2048
    else:
        assert largest >= 32 * 2**20
    quick = max((p["m"] * p["n"] if name == "gemm" else math.prod(p.values())) for p in spec.sizes["quick"])
    assert quick <= 2**22, "quick sizes must stay CPU-friendly"


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_llm_params(name):
    spec = get_kernel(name)
    if spec.llm_params is None:
        return
    p = spec.llm_params(LLM)
    if p is not None:
        spec.validate_params(p)
    expected = {"layernorm": {"rows": 256, "cols": 4096}, "gemm": {"m": 256, "k": 4096, "n": 11008},
                "bias_gelu": {"rows": 256, "cols": 11008}, "gelu_tanh": {"n": 256 * 11008}}
    if name in expected:
        assert p == expected[name]


def _ref(name, p, seed=0):
    spec = get_kernel(name)
    host = make_host_inputs(spec, p, "float64", seed)
    return host, reference_outputs(spec, host, p)


def test_references_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    t = lambda a: torch.from_numpy(np.asarray(a))  # noqa: E731
    n, rc = {"n": 1001}, {"rows": 7, "cols": 301}

    x, r = _ref("gelu_tanh", n)
    np.testing.assert_allclose(r["out"], F.gelu(t(x["x"]), approximate="tanh").numpy(), rtol=1e-13, atol=1e-15)
    x, r = _ref("gelu_erf", n)
    np.testing.assert_allclose(r["out"], F.gelu(t(x["x"])).numpy(), rtol=1e-13, atol=1e-15)
    x, r = _ref("silu", n)
    np.testing.assert_allclose(r["out"], F.silu(t(x["x"])).numpy(), rtol=1e-13, atol=1e-15)
    x, r = _ref("relu", n)
    np.testing.assert_array_equal(r["out"], torch.relu(t(x["x"])).numpy())
    x, r = _ref("softmax", rc)
    np.testing.assert_allclose(r["out"], torch.softmax(t(x["x"]), 1).numpy(), rtol=1e-12)
    x, r = _ref("layernorm", rc)
    np.testing.assert_allclose(r["out"], F.layer_norm(t(x["x"]), (301,), t(x["weight"]), t(x["bias"]), 1e-5).numpy(),
                               rtol=1e-11, atol=1e-12)
    x, r = _ref("rmsnorm", rc)
    np.testing.assert_allclose(r["out"], F.rms_norm(t(x["x"]), (301,), t(x["weight"]), 1e-6).numpy(), rtol=1e-11)
    x, r = _ref("rmsnorm_residual", rc)
    h = t(x["x"]) + t(x["residual"])
    np.testing.assert_allclose(r["residual_out"], h.numpy(), rtol=1e-15)
    np.testing.assert_allclose(r["out"], F.rms_norm(h, (301,), t(x["weight"]), 1e-6).numpy(), rtol=1e-11)
    x, r = _ref("bias_gelu", rc)
    np.testing.assert_allclose(r["out"], F.gelu(t(x["x"]) + t(x["bias"]), approximate="tanh").numpy(),
                               rtol=1e-13, atol=1e-15)
    x, r = _ref("argmax", rc)
    np.testing.assert_array_equal(r["out"], torch.argmax(t(x["x"]), 1).numpy())
    x, r = _ref("transpose", rc)
    np.testing.assert_array_equal(r["out"], t(x["x"]).t().contiguous().numpy())
    x, r = _ref("gemm", {"m": 33, "n": 65, "k": 17})
    np.testing.assert_allclose(r["out"], (t(x["a"]) @ t(x["b"])).numpy(), rtol=1e-12, atol=1e-12)
    x, r = _ref("sum", n)
    np.testing.assert_allclose(r["out"], [math.fsum(x["x"])], rtol=1e-14)
    x, r = _ref("vector_add", n)
    np.testing.assert_array_equal(r["out"], x["a"] + x["b"])


def test_gelu_erf_reference_against_math_erf():
    x, r = _ref("gelu_erf", {"n": 301})
    expect = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x["x"]]
    np.testing.assert_allclose(r["out"], expect, rtol=1e-14, atol=1e-300)


def test_reference_uses_dtype_rounded_inputs():
    """The runner rounds inputs to the run dtype first; the reference sees exactly those values."""
    spec = get_kernel("relu")
    host = make_host_inputs(spec, {"n": 100}, "float16", 0)
    assert host["x"].dtype == np.float16
    ref = reference_outputs(spec, host, {"n": 100})
    np.testing.assert_array_equal(ref["out"], np.maximum(host["x"].astype(np.float64), 0))


def test_sum_tolerance_separates_pairwise_from_sequential_float32():
    """2e-6 accepts a pairwise float32 sum and rejects sequential float32 accumulation at n = 2^22."""
    spec = get_kernel("sum")
    p = {"n": 2**22}
    host = make_host_inputs(spec, p, "float32", 0)
    ref = reference_outputs(spec, host, p)["out"][0]
    tol = spec.tolerance("float32")
    pairwise = np.sum(host["x"])
    sequential = np.cumsum(host["x"], dtype=np.float32)[-1]
    assert abs(pairwise - ref) / abs(ref) <= tol
    assert abs(sequential - ref) / abs(ref) > tol


def test_argmax_compare_allows_ties_and_rejects_wrong_indices():
    spec = get_kernel("argmax")
    x = np.array([[1.0, 3.0, 3.0, 0.0], [5.0, 1.0, 2.0, 5.0], [0.0, -1.0, -2.0, -3.0]], dtype=np.float32)
    p = {"rows": 3, "cols": 4}
    ref = {"out": np.argmax(x, axis=1)}
    cmp = lambda out: spec.compare({"out": np.asarray(out)}, ref, {"x": x}, p, "float32")  # noqa: E731
    assert cmp([1, 0, 0])[0] == 0 and cmp([2, 3, 0])[0] == 0  # either tied maximum
    assert cmp([0, 0, 0])[0] == pytest.approx(1 / 3)
    assert cmp([1, 0, 4])[0] > 0  # out of range
    assert cmp([-7, -7, -7])[0] == 1  # the poison sentinel
    assert cmp([1, 0])[0] == float("inf")  # wrong shape
    assert cmp([np.nan, 0.0, 0.0])[0] == float("inf")
    assert spec.tolerance("bfloat16") == 0.0


def test_loading_the_catalog_imports_no_optional_runtime(run_python):
    """Variants import numba/torch inside their builders, so listing kernels stays cheap and never fails."""
    code = ("import sys, workbench; ks = workbench.kernels(); "
            "[workbench.variants(k) for k in ks]; "
            "print(sorted(m for m in ('numba', 'torch', 'scipy', 'pyopencl', 'cupy') if m in sys.modules))")
    proc = run_python(code=code)
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout.strip()
    assert "numba" not in loaded and "torch" not in loaded, loaded

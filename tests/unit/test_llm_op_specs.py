"""Specs of the LLM operators (issue 14) against independent math: bytes, FLOPs, model-shape mappings,
the RoPE layouts, the quantisers. Pure numpy: no optional runtime."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from workbench.catalog import get_kernel
from workbench.catalog.rope import rope_spec

NEW = ("swiglu", "geglu", "embedding", "gemm_int8", "gemm_fp8", "rope", "rope_interleaved")
LLAMA3_8B = {"model": "llama-3-8b", "family": "llama3", "hidden": 4096, "intermediate": 14336, "heads": 32,
             "kv_heads": 8, "vocab": 128256, "batch": 2, "seq": 64}
GPT2 = {"model": "gpt2", "family": "gpt2", "hidden": 768, "intermediate": 3072, "heads": 12, "kv_heads": 12,
        "vocab": 50257, "batch": 1, "seq": 8}


@pytest.mark.parametrize("name", NEW)
def test_sizes_valid_odd_and_verify_small(name):
    spec = get_kernel(name)
    for key in ("verify", "quick", "full"):
        for p in spec.sizes[key]:
            spec.validate_params(p)
    assert any(any(v % 2 for v in p.values()) for p in spec.sizes["verify"])
    for p in spec.sizes["verify"]:
        raw = spec.make_inputs(p, np.random.default_rng(0))
        ref = spec.reference(raw, p)
        assert {k: np.shape(v) for k, v in ref.items()} == spec.output_shapes(p)


@pytest.mark.parametrize("name", NEW)
def test_bytes_count_each_input_read_and_output_written_once(name):
    spec = get_kernel(name)
    p = spec.sizes["verify"][-1]
    raw = spec.make_inputs(p, np.random.default_rng(0))
    for itemsize in (2, 4, 8):
        expect = sum(int(np.prod(s)) for s in spec.output_shapes(p).values()) * itemsize
        for k, v in raw.items():
            own = spec.input_dtypes.get(k)
            expect += v.size * (np.dtype(own).itemsize if own else itemsize)
        if name == "embedding":  # the rows gathered, not the table
            expect += p["tokens"] * p["hidden"] * itemsize - raw["table"].size * itemsize
        assert spec.bytes_moved(p, itemsize) == expect, (p, itemsize)


def test_flops():
    assert get_kernel("swiglu").flops({"n": 10}) == 50
    assert get_kernel("geglu").flops({"n": 10}) == 60
    assert get_kernel("embedding").flops({"tokens": 3, "vocab": 5, "hidden": 7}) == 0
    assert get_kernel("gemm_int8").flops({"m": 2, "n": 3, "k": 5}) == 2 * 2 * 3 * 5 + 2 * 3
    assert get_kernel("rope").flops({"tokens": 2, "heads": 4, "kv_heads": 2, "head_dim": 8}) == 3 * 2 * 6 * 8


def test_llm_params_follow_the_model():
    assert get_kernel("rope").llm_params(LLAMA3_8B) == {"tokens": 128, "heads": 32, "kv_heads": 8, "head_dim": 128}
    assert get_kernel("rope").llm_params({**LLAMA3_8B, "head_dim": 64})["head_dim"] == 64
    assert get_kernel("swiglu").llm_params(LLAMA3_8B) == {"n": 128 * 14336}
    assert get_kernel("embedding").llm_params(LLAMA3_8B) == {"tokens": 128, "vocab": 128256, "hidden": 4096}
    for name in ("gemm_int8", "gemm_fp8"):
        assert get_kernel(name).llm_params(LLAMA3_8B) == {"m": 128, "k": 4096, "n": 14336}
    for name in ("rope", "rope_interleaved", "swiglu", "geglu"):  # GPT-2: learned positions, ungated GELU MLP
        assert get_kernel(name).llm_params(GPT2) is None
    assert get_kernel("embedding").llm_params(GPT2)["vocab"] == 50257


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("theta", [10000.0, 500000.0])
def test_rope_reference_against_complex_rotation(layout, theta):
    """Each pair times e^(i pos theta^(-2j/d)), with the pairs gathered per layout by hand."""
    spec = rope_spec("rope_test", "", layout, theta=theta)
    p = {"tokens": 5, "heads": 3, "kv_heads": 1, "head_dim": 16}
    raw = spec.make_inputs(p, np.random.default_rng(3))
    ref = spec.reference(raw, p)
    freqs = raw["cos"] + 1j * raw["sin"]
    assert np.allclose(np.abs(freqs), 1.0)
    # every pair's angle is pos * theta^(-2j/d) for one integer position per token
    inv_freq = theta ** (-np.arange(8) * 2.0 / 16)
    np.testing.assert_allclose(np.exp(1j * np.outer(np.rint(_positions(raw, inv_freq)), inv_freq)), freqs,
                               atol=1e-9)
    for x, o in (("q", "q_out"), ("k", "k_out")):
        v = raw[x]
        z = v[..., :8] + 1j * v[..., 8:] if layout == "half" else v[..., 0::2] + 1j * v[..., 1::2]
        r = z * freqs[:, None, :]
        expect = (np.concatenate([r.real, r.imag], -1) if layout == "half"
                  else np.stack([r.real, r.imag], -1).reshape(v.shape))
        np.testing.assert_allclose(ref[o], expect, atol=1e-12)


def _positions(raw, inv_freq):
    """Each token's position from its lowest-frequency angle (below pi for positions < 8192 at both thetas
    here, so np.angle does not wrap it)."""
    return np.angle(raw["cos"][:, -1] + 1j * raw["sin"][:, -1]) / inv_freq[-1]


def test_rope_odd_head_dim_is_a_clear_error():
    with pytest.raises(ValueError, match="head_dim must be even.*got 7"):
        get_kernel("rope").make_inputs({"tokens": 1, "heads": 1, "kv_heads": 1, "head_dim": 7},
                                       np.random.default_rng(0))
    with pytest.raises(ValueError, match="valid layouts: half, interleaved"):
        rope_spec("x", "", "neox")


def test_int8_quantiser_is_within_half_a_step():
    get_kernel("gemm_int8")  # loads the catalog
    spec = importlib.import_module("workbench_catalog.gemm_int8.spec")
    w = np.random.default_rng(0).standard_normal((6, 50)) * np.array([[1e-3], [1], [10], [0.1], [5], [2]])
    codes, scale = spec.quantize_int8(w)
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    assert np.all(np.abs(codes * scale[:, None] - w) <= 0.5 * scale[:, None] * (1 + 1e-12))


def test_fp8_codec_round_trip_and_range():
    get_kernel("gemm_fp8")  # loads the catalog
    spec = importlib.import_module("workbench_catalog.gemm_fp8.spec")
    values = spec.DECODE_TABLE
    assert np.isnan(values[0x7F]) and np.isnan(values[0xFF]) and np.nanmax(values) == 448.0
    assert values[0x01] == 2.0 ** -9 and values[0x38] == 1.0
    finite = np.arange(256)[np.isfinite(values)]
    back = spec.encode_e4m3(values[finite])
    np.testing.assert_array_equal(spec.decode_e4m3(back), values[finite])  # -0 and +0 both decode to 0
    assert spec.encode_e4m3(np.array([1e6]))[0] == 0x7E  # saturates at 448, never NaN


def test_the_checks_table_decode_gives_the_formulas_numbers():
    """gemm_fp8's checks decode weights through the 256 codes decoded once (240 ms -> 24 ms a check at 4864x896):
    every code, NaNs included, gives exactly what the formula gives it, and a wrong product still fails."""
    from workbench.catalog.quantized import decoded_weights

    get_kernel("gemm_fp8")
    spec = importlib.import_module("workbench_catalog.gemm_fp8.spec")
    codes = np.random.default_rng(1).integers(0, 256, (37, 300)).astype(np.uint8)
    np.testing.assert_array_equal(decoded_weights(codes, spec.decode_e4m3, by_table=True), spec.decode_e4m3(codes))
    k = get_kernel("gemm_fp8")
    p = {"m": 3, "n": 65, "k": 17}
    inp = k.make_inputs(p, np.random.default_rng(2))
    ref = k.reference(inp, p)
    assert k.compare({"out": ref["out"].astype(np.float32)}, ref, inp, p, "float32")[1] == ""
    off = ref["out"].copy()
    off[1, 7] += 1e-3 * np.abs(off).max()
    assert "max error" in k.compare({"out": off.astype(np.float32)}, ref, inp, p, "float32")[1]

"""The attention specs (attention_prefill, attention_decode): reference against independent math, sizes, counts,
LLM mapping and bad sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.catalog import get_kernel

KERNELS = ("attention_prefill", "attention_decode")
LLAMA3_8B = {"model": "llama-3-8b", "hidden": 4096, "intermediate": 14336, "heads": 32, "kv_heads": 8,
             "vocab": 128256, "batch": 4, "seq": 512}


def _loop_attention(q, k, v, causal):
    """Per (batch, head, query) loops with Python floats: an independent float64 attention."""
    b, h, sq, d = q.shape
    kvh = k.shape[1]
    out = np.zeros_like(q)
    for bi in range(b):
        for hi in range(h):
            kh = hi // (h // kvh)
            for i in range(sq):
                keys = range(i + 1) if causal else range(k.shape[2])
                s = [float(q[bi, hi, i] @ k[bi, kh, j]) / math.sqrt(d) for j in keys]
                mx = max(s)
                w = [math.exp(x - mx) for x in s]
                out[bi, hi, i] = sum(wj * v[bi, kh, j] for wj, j in zip(w, keys, strict=True)) / sum(w)
    return out


@pytest.mark.parametrize("name", KERNELS)
def test_reference_matches_loops_on_every_verify_size(name):
    spec = get_kernel(name)
    for p in spec.sizes["verify"]:
        if p.get("seq", 0) > 70 or p.get("kv_len", 0) > 70:
            continue  # the loops are slow; the larger sizes are covered against torch below
        inp = spec.make_inputs(p, np.random.default_rng(3))
        ref = spec.reference(inp, p)["out"]
        if name == "attention_prefill":
            expect = _loop_attention(inp["q"], inp["k"], inp["v"], causal=True)
        else:
            expect = _loop_attention(inp["q"][:, :, None], inp["k"], inp["v"], causal=False)[:, :, 0]
        np.testing.assert_allclose(ref, expect, rtol=1e-12, atol=1e-13)
        assert ref.shape == spec.output_shapes(p)["out"]


def test_references_against_torch_sdpa():
    torch = pytest.importorskip("torch")
    f = torch.nn.functional.scaled_dot_product_attention
    spec = get_kernel("attention_prefill")
    p = spec.sizes["verify"][-1]
    inp = spec.make_inputs(p, np.random.default_rng(0))
    t = {k: torch.from_numpy(a) for k, a in inp.items()}
    got = f(t["q"], t["k"], t["v"], is_causal=True, enable_gqa=True).numpy()
    np.testing.assert_allclose(spec.reference(inp, p)["out"], got, rtol=1e-11, atol=1e-12)
    spec = get_kernel("attention_decode")
    p = spec.sizes["verify"][-1]
    inp = spec.make_inputs(p, np.random.default_rng(0))
    t = {k: torch.from_numpy(a) for k, a in inp.items()}
    got = f(t["q"][:, :, None], t["k"], t["v"], enable_gqa=True)[:, :, 0].numpy()
    np.testing.assert_allclose(spec.reference(inp, p)["out"], got, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", KERNELS)
def test_verify_sizes_cover_odd_shapes_and_both_groupings(name):
    spec = get_kernel(name)
    sizes = spec.sizes["verify"]
    tokens = "seq" if name == "attention_prefill" else "kv_len"
    assert any(all(v == 1 for v in p.values()) for p in sizes)
    assert any(p[tokens] % 2 and p[tokens] > 1 for p in sizes)
    assert any(p["head_dim"] % 2 and p["head_dim"] > 1 for p in sizes)
    assert any(p["heads"] % 8 for p in sizes)
    assert any(p["kv_heads"] == 1 and p["heads"] > 1 for p in sizes)
    assert any(p["kv_heads"] == p["heads"] > 1 for p in sizes)
    assert any(1 < p["kv_heads"] < p["heads"] for p in sizes)
    for key in ("verify", "quick", "full"):
        for p in spec.sizes[key]:
            spec.validate_params(p)


def test_flops_and_bytes():
    pre = get_kernel("attention_prefill")
    p = {"batch": 2, "heads": 4, "kv_heads": 2, "seq": 5, "head_dim": 8}
    assert pre.flops(p) == 2 * 4 * (15 * (4 * 8 + 3) + 5 * 8)  # 15 causal (query, key) pairs per head
    assert pre.bytes_moved(p, 4) == (2 * 4 * 5 * 8 * 2 + 2 * 2 * 5 * 8 * 2) * 4  # q, out; k, v
    dec = get_kernel("attention_decode")
    p = {"batch": 2, "heads": 4, "kv_heads": 2, "kv_len": 7, "head_dim": 8}
    assert dec.flops(p) == 2 * 4 * (7 * (4 * 8 + 3) + 8)
    assert dec.bytes_moved(p, 2) == (2 * 4 * 8 * 2 + 2 * 2 * 7 * 8 * 2) * 2
    assert pre.bound == "compute-bound" and dec.bound == "memory-bound"


def test_llm_params():
    assert get_kernel("attention_prefill").llm_params(LLAMA3_8B) == {
        "batch": 4, "heads": 32, "kv_heads": 8, "seq": 512, "head_dim": 128}
    dec = get_kernel("attention_decode")
    assert dec.llm_params(LLAMA3_8B) == {"batch": 4, "heads": 32, "kv_heads": 8, "kv_len": 512, "head_dim": 128}
    assert dec.llm_params({**LLAMA3_8B, "kv_len": 4096, "head_dim": 64})["kv_len"] == 4096
    assert dec.llm_params({**LLAMA3_8B, "head_dim": 64})["head_dim"] == 64
    gpt2 = {"hidden": 768, "intermediate": 3072, "heads": 12, "batch": 1, "seq": 128}  # no kv_heads: MHA
    assert get_kernel("attention_prefill").llm_params(gpt2)["kv_heads"] == 12
    assert get_kernel("attention_prefill").llm_params(gpt2)["head_dim"] == 64
    assert get_kernel("attention_prefill").llm_params({**gpt2, "kv_heads": 5}) is None  # 12 heads do not group by 5


@pytest.mark.parametrize("name", KERNELS)
def test_heads_must_group(name):
    spec = get_kernel(name)
    p = dict(spec.sizes["verify"][1], heads=6, kv_heads=4)
    with pytest.raises(ValueError, match=r"heads=6 is not a multiple of kv_heads=4.*\[1, 2, 3, 6\]"):
        spec.validate_params(p)

"""attention_block: a decoder layer's attention — rmsnorm → q/k/v projections (grouped-query) → RoPE → causal
attention over the KV cache and the new keys → output projection + residual.

``seq`` new tokens per sequence (1 at decode) arrive after ``past`` cached
ones: their queries see the cache and the new keys up to their own position.
The new keys (rotated) and values are outputs too (``k_new``, ``v_new``: what
an engine appends to its cache); the cache itself is an input and is never
written. ``heads`` query heads share ``kv_heads`` key/value heads (GQA:
``heads`` a multiple of ``kv_heads``); RoPE is the rotate-half ("neox") form
with base 10000 at positions ``past .. past+seq-1``. Every variant builds the
cos/sin table once per shape in float64 and rounds it to the run dtype, as
engines cache it, so no variant's error comes from evaluating large angles
in float32.

Layouts: x and out ``[batch, seq, hidden]``; weights ``[in, out]`` (``x @ w``),
scaled by 1/sqrt(fan_in); cache and new keys/values ``[batch, kv_heads, len,
head_dim]``. Measured float32 error ≤ 1e-6 of max|out|; tolerance 2e-5.
"""

import math

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.spec import DEFAULT_TOLERANCES

#: rmsnorm's epsilon and the RoPE base.
EPS = 1e-6
THETA = 10000.0
AXES = ("batch", "seq", "past", "hidden", "heads", "kv_heads", "head_dim")


def check_heads(p) -> None:
    """GQA needs heads a multiple of kv_heads, and rotate-half RoPE an even head_dim."""
    if p["heads"] % p["kv_heads"]:
        raise ValueError(f"attention_block: heads ({p['heads']}) must be a multiple of kv_heads ({p['kv_heads']})")
    if p["head_dim"] % 2:
        raise ValueError(f"attention_block: head_dim must be even for rotate-half RoPE, got {p['head_dim']}")


def rope_tables(p, dtype="float64", xp=np):
    """cos and sin [seq, head_dim/2] at positions past .. past+seq-1, computed in float64 (with array module
    ``xp``) and rounded to ``dtype``."""
    half = p["head_dim"] // 2
    inv = THETA ** (-xp.arange(half, dtype=xp.float64) * 2.0 / p["head_dim"])
    ang = (p["past"] + xp.arange(p["seq"], dtype=xp.float64))[:, None] * inv[None, :]
    return xp.cos(ang).astype(dtype), xp.sin(ang).astype(dtype)


def params_of(inp):
    """The sizes of a set of inputs (for runs that are handed only arrays)."""
    b, s, h = inp["x"].shape
    _, nkv, past, d = inp["k_cache"].shape
    return {"batch": b, "seq": s, "past": past, "hidden": h, "heads": inp["wq"].shape[1] // d, "kv_heads": nkv,
            "head_dim": d}


def make_inputs(p, rng: np.random.Generator):
    check_heads(p)
    b, s, past, h = p["batch"], p["seq"], p["past"], p["hidden"]
    qd, kvd = p["heads"] * p["head_dim"], p["kv_heads"] * p["head_dim"]
    cache = (b, p["kv_heads"], past, p["head_dim"])
    return {"x": rng.standard_normal((b, s, h)),
            "norm_weight": 1.0 + 0.1 * rng.standard_normal(h),
            "wq": rng.standard_normal((h, qd)) / np.sqrt(h),
            "wk": rng.standard_normal((h, kvd)) / np.sqrt(h),
            "wv": rng.standard_normal((h, kvd)) / np.sqrt(h),
            "wo": rng.standard_normal((qd, h)) / np.sqrt(qd),
            "k_cache": rng.standard_normal(cache),
            "v_cache": rng.standard_normal(cache)}


def rope(t, cos, sin, xp=np):
    """Rotate-half RoPE on the last axis of t [..., seq, head_dim]."""
    half = t.shape[-1] // 2
    t1, t2 = t[..., :half], t[..., half:]
    return xp.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], axis=-1)


def heads_first(t, b, s, n, d):
    """[batch, seq, n*d] -> [batch, n, seq, d]."""
    return t.reshape(b, s, n, d).transpose(0, 2, 1, 3)


def forward(inp, p, cos, sin, xp=np):
    """The block in the dtype of its inputs and of ``cos``/``sin``, with array module ``xp``: the reference in
    float64, numpy's and CuPy's eager variants in the run dtype. Returns out, k_new, v_new."""
    b, s, past, nh, nkv, d = p["batch"], p["seq"], p["past"], p["heads"], p["kv_heads"], p["head_dim"]
    x = inp["x"]
    xn = x / xp.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * inp["norm_weight"]
    q = rope(heads_first(xn @ inp["wq"], b, s, nh, d), cos, sin, xp)
    k = rope(heads_first(xn @ inp["wk"], b, s, nkv, d), cos, sin, xp)
    v = heads_first(xn @ inp["wv"], b, s, nkv, d)
    keys = xp.repeat(xp.concatenate([inp["k_cache"], k], axis=2), nh // nkv, axis=1)
    values = xp.repeat(xp.concatenate([inp["v_cache"], v], axis=2), nh // nkv, axis=1)
    scores = q @ keys.transpose(0, 1, 3, 2) / math.sqrt(d)
    blocked = xp.arange(past + s)[None, :] > past + xp.arange(s)[:, None]
    scores = xp.where(blocked, -xp.inf, scores).astype(scores.dtype)
    w = xp.exp(scores - scores.max(axis=-1, keepdims=True))
    o = (w / w.sum(axis=-1, keepdims=True)) @ values
    attn = o.transpose(0, 2, 1, 3).reshape(b, s, nh * d)
    return x + attn @ inp["wo"], k, v


def reference(inp, p):
    out, k, v = forward(inp, p, *rope_tables(p))
    return {"out": out, "k_new": k, "v_new": v}


def output_shapes(p):
    kv = (p["batch"], p["kv_heads"], p["seq"], p["head_dim"])
    return {"out": (p["batch"], p["seq"], p["hidden"]), "k_new": kv, "v_new": kv}


def pairs(p) -> int:
    """(query, key) pairs per head: query i sees past + i + 1 keys."""
    s = p["seq"]
    return s * p["past"] + s * (s + 1) // 2


def flops(p):
    t, h, d = p["batch"] * p["seq"], p["hidden"], p["head_dim"]
    qd, kvd = p["heads"] * d, p["kv_heads"] * d
    proj = 2 * t * h * (qd + 2 * kvd) + 2 * t * qd * h
    rope_f = 3 * t * (qd + kvd)  # two multiplies and an add per element
    attn = p["batch"] * p["heads"] * pairs(p) * (4 * d + 5)  # QK^T, PV, softmax (exp, max, sum, scale, divide)
    return 4 * t * h + proj + rope_f + attn + t * h


def bytes_moved(p, itemsize):
    t, h, d = p["batch"] * p["seq"], p["hidden"], p["head_dim"]
    qd, kvd = p["heads"] * d, p["kv_heads"] * d
    cache = 2 * p["batch"] * p["kv_heads"] * p["past"] * d
    return (2 * t * h + h + h * (qd + 2 * kvd) + qd * h + cache + 2 * t * kvd) * itemsize


def llm_params(s):
    """seq new tokens after a cache of kv_len (the shape's ``kv_len``; without one, seq cached tokens: the
    second chunk of a chunked prefill; seq = 1 is decode). head_dim = hidden / heads unless given."""
    heads = int(s.get("heads") or 0)
    if not heads:
        return None
    kv = int(s.get("kv_heads") or heads)
    return {"batch": int(s["batch"]), "seq": int(s["seq"]), "past": int(s.get("kv_len") or s["seq"]),
            "hidden": int(s["hidden"]), "heads": heads, "kv_heads": kv,
            "head_dim": int(s.get("head_dim") or int(s["hidden"]) // heads)}


def size(batch, seq, past, hidden, heads, kv_heads, head_dim):
    return dict(zip(AXES, (batch, seq, past, hidden, heads, kv_heads, head_dim), strict=True))


SPEC = kernel_here(__file__).register(
    description="decoder attention block: rmsnorm → q/k/v (GQA) → RoPE → causal attention over the KV cache → "
                "o projection + residual; eager vs graph vs fused",
    axes=AXES,
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=output_shapes,
    flops=flops,
    bytes_moved=bytes_moved,
    sizes={
        "verify": [size(1, 1, 7, 20, 5, 1, 4), size(2, 3, 5, 24, 4, 2, 6), size(1, 9, 1, 32, 2, 2, 16),
                   size(2, 17, 3, 40, 4, 2, 10)],
        # decode steps: a small model's attention, then Qwen2.5-0.5B's (14 heads, 2 KV heads, head_dim 64)
        "quick": [size(1, 1, 128, 256, 4, 2, 64), size(1, 1, 512, 896, 14, 2, 64)],
        "full": [size(1, 1, 512, 896, 14, 2, 64), size(1, 1, 2048, 896, 14, 2, 64), size(8, 1, 1024, 896, 14, 2, 64),
                 size(1, 128, 128, 896, 14, 2, 64), size(1, 1, 1024, 4096, 32, 8, 128)],
    },
    tolerances={**DEFAULT_TOLERANCES, "float32": 2e-5, "float16": 1e-2, "bfloat16": 6e-2},
    bound="memory-bound",
    llm_params=llm_params,
)

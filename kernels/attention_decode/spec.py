"""Attention decode: one new query token per sequence against a KV cache of length kv_len, grouped-query.

Shapes: ``q[batch, heads, head_dim]`` (the new token), ``k, v[batch, kv_heads, kv_len, head_dim]`` (the
cache, the new token's own key and value included), ``out[batch, heads, head_dim]``; query head ``h``
reads KV head ``h // (heads / kv_heads)`` (see ``workbench.catalog.attention``). No mask: the one query
is the latest position and sees every cached key.

FLOPs: kv_len keys per head at 2d (score) + 2d (p v) + 3 (softmax: subtract, exp, add), plus d to
normalise. Bytes are the compulsory traffic, dominated by reading the cache once: 2 batch kv_heads
kv_len d elements, plus q and out. Decode is memory-bound: each cached element feeds 2 FLOPs per query
head of its group, so grouped-query kernels should read a KV head once for its whole group.

Tolerances (error relative to max|out|). The output averages kv_len value rows, so max|out| shrinks
like 1/sqrt(kv_len) while the rounding of the weighted sums does not: the float32 error grows like
sqrt(kv_len). Measured: at kv_len 1000, 1.2e-6 (SDPA math, portable on PoCL), 7.6e-7 (numpy-naive);
at 1x8x1x32768x128, 6.1e-6 (SDPA math and flash), 6.6e-6 (portable), 2.9e-6 (numpy-naive), 5.3e-7
(numba-flash: chunks of 256 keys merged at the end, a pairwise sum). float32 is 2e-5: 3x margin at
32k keys, ~1.5x at 128k; a kernel dropping or repeating one key errs by ~1/kv_len x |v| / max|out|,
orders of magnitude more at any verify size. float16 / bfloat16: torch on the CPU accumulates in
float32 and rounds once (measured 4.5e-4 / 3.0e-3 at 32k keys), within the defaults 5e-3 / 4e-2.
float64: default 1e-10 (measured < 3e-15).
"""

from workbench.catalog import kernel_here
from workbench.catalog.attention import AttentionSpec, attention_reference, llm_heads, make_qkv
from workbench.catalog.spec import DEFAULT_TOLERANCES

AXES = ("batch", "heads", "kv_heads", "kv_len", "head_dim")


def shape(batch: int, heads: int, kv_heads: int, kv_len: int, head_dim: int) -> dict[str, int]:
    return dict(zip(AXES, (batch, heads, kv_heads, kv_len, head_dim), strict=True))


def make_inputs(p, rng):
    qkv = make_qkv(p, 1, p["kv_len"], rng)
    return {**qkv, "q": qkv["q"][:, :, 0, :]}


def llm_params(s):
    """An LLM shape's decode step: ``batch`` sequences, each with a cache of ``kv_len`` (default: ``seq``)."""
    heads = llm_heads(s)
    return None if heads is None else {**heads, "kv_len": int(s.get("kv_len") or s["seq"])}


SPEC = kernel_here(__file__).register(
    AttentionSpec,
    description="attention decode: one query token against a KV cache, grouped-query (naive vs flash-decoding "
                "vs SDPA)",
    axes=AXES,
    make_inputs=make_inputs,
    reference=lambda inp, p: {"out": attention_reference(inp["q"][:, :, None, :], inp["k"], inp["v"],
                                                         causal=False)[:, :, 0, :]},
    output_shapes=lambda p: {"out": (p["batch"], p["heads"], p["head_dim"])},
    flops=lambda p: p["batch"] * p["heads"] * (p["kv_len"] * (4 * p["head_dim"] + 3) + p["head_dim"]),
    bytes_moved=lambda p, itemsize: 2 * p["batch"] * p["head_dim"] * (p["heads"] + p["kv_heads"] * p["kv_len"])
    * itemsize,
    sizes={
        "verify": [shape(1, 1, 1, 1, 1), shape(2, 3, 1, 17, 5), shape(3, 6, 6, 33, 64),
                   shape(1, 12, 4, 70, 33), shape(1, 8, 1, 1000, 128)],
        "quick": [shape(1, 32, 8, 1024, 128), shape(8, 32, 8, 1024, 128), shape(1, 32, 8, 4096, 128)],
        "full": [shape(1, 32, 8, 8192, 128), shape(8, 32, 8, 4096, 128), shape(32, 32, 8, 2048, 128),
                 shape(1, 64, 8, 32768, 128)],
    },
    tolerances={**DEFAULT_TOLERANCES, "float32": 2e-5},
    llm_params=llm_params,
)

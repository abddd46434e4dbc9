"""Causal attention prefill: out = softmax(q k^T / sqrt(d) + causal mask) v, grouped-query.

Shapes (torch SDPA layout): ``q[batch, heads, seq, head_dim]``, ``k, v[batch, kv_heads, seq,
head_dim]``, ``out`` like ``q``; query head ``h`` reads KV head ``h // (heads / kv_heads)``, and query
``i`` attends to keys ``j <= i`` (see ``workbench.catalog.attention``).

FLOPs count the causal work only, seq(seq+1)/2 (query, key) pairs per head: 2d for the score, 2d for
its share of p v, and 3 for the softmax (subtract the max, exp, add to the sum), plus d per query to
normalise. A kernel that computes the masked half anyway (SDPA's math backend) does more than that.
Bytes are the compulsory traffic: q, k, v read once and out written once; the seq x seq scores are
never compulsory, and a flash-style kernel never stores them.

Tolerances (error relative to max|out|; out is a convex combination of v rows, so max|out| ~ |v| ~ 3,
set by the first queries, which see few keys). float32, measured at 1x8x2x2048x128: SDPA math 4.4e-7,
SDPA flash, numpy-naive and numba-flash (polynomial exp, rescaling once per key tile) 3.2e-7, the
portable kernel on PoCL 3.4e-7; at the verify sizes at most 3.5e-7. 1e-5 leaves a 20x margin. float16 /
bfloat16: torch on the CPU (and numpy-naive, computed in float32) round inputs and output only:
measured 3.3e-4 / 2.1e-3, within the defaults 5e-3 / 4e-2. float64 keeps 1e-10 (measured < 1e-15).
"""

from workbench.catalog import kernel_here
from workbench.catalog.attention import AttentionSpec, attention_reference, llm_heads, make_qkv
from workbench.catalog.spec import DEFAULT_TOLERANCES

AXES = ("batch", "heads", "kv_heads", "seq", "head_dim")


def shape(batch: int, heads: int, kv_heads: int, seq: int, head_dim: int) -> dict[str, int]:
    return dict(zip(AXES, (batch, heads, kv_heads, seq, head_dim), strict=True))


def pairs(p) -> int:
    """(query, key) pairs a causal head computes."""
    return p["seq"] * (p["seq"] + 1) // 2


def llm_params(s):
    """An LLM shape's prefill: ``seq`` tokens of ``batch`` sequences through its attention heads."""
    heads = llm_heads(s)
    return None if heads is None else {**heads, "seq": int(s["seq"])}


SPEC = kernel_here(__file__).register(
    AttentionSpec,
    description="causal attention prefill, grouped-query: naive (scores materialised) vs flash-style vs SDPA",
    axes=AXES,
    make_inputs=lambda p, rng: make_qkv(p, p["seq"], p["seq"], rng),
    reference=lambda inp, p: {"out": attention_reference(inp["q"], inp["k"], inp["v"], causal=True)},
    output_shapes=lambda p: {"out": (p["batch"], p["heads"], p["seq"], p["head_dim"])},
    flops=lambda p: p["batch"] * p["heads"] * (pairs(p) * (4 * p["head_dim"] + 3) + p["seq"] * p["head_dim"]),
    bytes_moved=lambda p, itemsize: 2 * p["batch"] * p["seq"] * p["head_dim"] * (p["heads"] + p["kv_heads"])
    * itemsize,
    sizes={
        "verify": [shape(1, 1, 1, 1, 1), shape(2, 3, 1, 17, 5), shape(1, 6, 6, 33, 64),
                   shape(1, 12, 4, 70, 33), shape(1, 2, 1, 131, 128)],
        "quick": [shape(1, 8, 2, 256, 64), shape(1, 8, 2, 512, 64), shape(1, 32, 8, 512, 128)],
        "full": [shape(1, 32, 8, 1024, 128), shape(1, 32, 8, 2048, 128), shape(1, 8, 2, 4096, 128)],
    },
    tolerances={**DEFAULT_TOLERANCES, "float32": 1e-5},
    bound="compute-bound",
    llm_params=llm_params,
)

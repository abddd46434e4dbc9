"""attention prefill as a Triton flash kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

One program per (BLOCK_M queries, batch x head): it walks key tiles of BLOCK_N up to its last query
(causal: tiles above the diagonal are skipped), ``tl.dot`` for q k^T and p v (``input_precision="ieee"``:
no tf32), masked future keys as -inf, and the online softmax (running max, sum, rescaled accumulator).
head_dim is padded to a power of two >= 16 (``tl.dot``'s minimum) and masked; inputs are contiguous
[batch, heads, seq, head_dim]. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

BLOCK_M, BLOCK_N = 32, 16  # 32 x 32 and 64 x 32 spilled SGPRs on gfx90a (compile-check)
NUM_WARPS = 8  # float32 ieee tiles at head_dim 128: 4 warps spilled on sm_80/sm_90


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def attention_prefill_kernel(q_ptr, k_ptr, v_ptr, out_ptr, heads, kv_heads, seq, head_dim, scale,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
        start = tl.program_id(0) * BLOCK_M
        bh = tl.program_id(1)
        b, h = bh // heads, bh % heads
        kv = b * kv_heads + h // (heads // kv_heads)
        rows = start + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_D)
        dmask = cols[None, :] < head_dim
        q = tl.load(q_ptr + (bh * seq + rows[:, None]) * head_dim + cols[None, :],
                    mask=(rows[:, None] < seq) & dmask, other=0.0)
        m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
        total = tl.zeros((BLOCK_M,), tl.float32)
        acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
        for j0 in range(0, tl.minimum(start + BLOCK_M, seq), BLOCK_N):
            keys = j0 + tl.arange(0, BLOCK_N)
            kv_mask = (keys[:, None] < seq) & dmask
            k = tl.load(k_ptr + (kv * seq + keys[:, None]) * head_dim + cols[None, :], mask=kv_mask, other=0.0)
            v = tl.load(v_ptr + (kv * seq + keys[:, None]) * head_dim + cols[None, :], mask=kv_mask, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
            s = tl.where((keys[None, :] <= rows[:, None]) & (keys[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=1))
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new[:, None])
            total = total * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
            m = m_new
        tl.store(out_ptr + (bh * seq + rows[:, None]) * head_dim + cols[None, :], acc / total[:, None],
                 mask=(rows[:, None] < seq) & dmask)

    return attention_prefill_kernel


def block_d(head_dim: int) -> int:
    """head_dim padded to a power of two, at least 16 (tl.dot's smallest tile)."""
    return max(16, 1 << (head_dim - 1).bit_length())


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"flash tiles of {BLOCK_M} queries x {BLOCK_N} keys, tl.dot (ieee), "
                                           "online softmax, causal tiles only; float32")
def build(ctx):
    import math

    import triton

    kernel, p = _kernel(), ctx.params
    grid = (triton.cdiv(p["seq"], BLOCK_M), p["batch"] * p["heads"])
    scale = 1.0 / math.sqrt(p["head_dim"])

    def run(inp, out):
        kernel[grid](inp["q"], inp["k"], inp["v"], out["out"], p["heads"], p["kv_heads"], p["seq"], p["head_dim"],
                     scale, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=block_d(p["head_dim"]), num_warps=NUM_WARPS)
    return run


#: ``workbench compile-check`` compiles the kernel for GPUs at head_dim 128.
COMPILE = (TritonCompile(_kernel, {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32",
                                   "heads": "i32", "kv_heads": "i32", "seq": "i32", "head_dim": "i32",
                                   "scale": "fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                                   "BLOCK_D": "constexpr"},
                         {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_D": 128}, num_warps=NUM_WARPS,
                         label="head_dim 128"),)

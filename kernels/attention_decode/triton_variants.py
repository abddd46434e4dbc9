"""attention decode as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

One program per (batch, head) walks the KV cache in tiles of BLOCK_N keys: scores by a broadcast
multiply and row sum (one query: no tl.dot), keys past kv_len masked as -inf, online softmax (running
max and sum, rescaled accumulator). head_dim is padded to a power of two and masked; inputs are
contiguous. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

BLOCK_N = 16  # 32 and 64 spilled SGPRs on gfx90a/gfx942 (compile-check)


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def attention_decode_kernel(q_ptr, k_ptr, v_ptr, out_ptr, heads, kv_heads, kv_len, head_dim, scale,
                                BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
        bh = tl.program_id(0)
        b, h = bh // heads, bh % heads
        kv = b * kv_heads + h // (heads // kv_heads)
        cols = tl.arange(0, BLOCK_D)
        dmask = cols < head_dim
        q = tl.load(q_ptr + bh * head_dim + cols, mask=dmask, other=0.0) * scale
        m = tl.full((1,), float("-inf"), tl.float32)
        total = tl.zeros((1,), tl.float32)
        acc = tl.zeros((BLOCK_D,), tl.float32)
        for j0 in range(0, kv_len, BLOCK_N):
            keys = j0 + tl.arange(0, BLOCK_N)
            mask = (keys[:, None] < kv_len) & dmask[None, :]
            k = tl.load(k_ptr + (kv * kv_len + keys[:, None]) * head_dim + cols[None, :], mask=mask, other=0.0)
            v = tl.load(v_ptr + (kv * kv_len + keys[:, None]) * head_dim + cols[None, :], mask=mask, other=0.0)
            s = tl.where(keys < kv_len, tl.sum(q[None, :] * k, axis=1), float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=0))
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new)
            total = total * alpha + tl.sum(p, axis=0)
            acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
            m = m_new
        tl.store(out_ptr + bh * head_dim + cols, acc / total, mask=dmask)

    return attention_decode_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per (batch, head), {BLOCK_N}-key tiles, online softmax; "
                                           "float32")
def build(ctx):
    import math

    from workbench_catalog.attention_prefill.triton_variants import block_d

    kernel, p = _kernel(), ctx.params
    scale = 1.0 / math.sqrt(p["head_dim"])

    def run(inp, out):
        kernel[(p["batch"] * p["heads"],)](inp["q"], inp["k"], inp["v"], out["out"], p["heads"], p["kv_heads"],
                                           p["kv_len"], p["head_dim"], scale, BLOCK_N=BLOCK_N,
                                           BLOCK_D=block_d(p["head_dim"]))
    return run


#: ``workbench compile-check`` compiles the kernel for GPUs at head_dim 128.
COMPILE = (TritonCompile(_kernel, {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32",
                                   "heads": "i32", "kv_heads": "i32", "kv_len": "i32", "head_dim": "i32",
                                   "scale": "fp32", "BLOCK_N": "constexpr", "BLOCK_D": "constexpr"},
                         {"BLOCK_N": BLOCK_N, "BLOCK_D": 128}, label="head_dim 128"),)

"""Variant builders both RoPE layouts share (``kernels/rope``, ``kernels/rope_interleaved``): a numba row
kernel, the torch forms, the portable and the Triton kernels. The layout is a closure constant, so each
layout compiles to its own loop."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from workbench.authoring.numba_support import disk_cached
from workbench.catalog.authoring import KernelFolder
from workbench.catalog.spec import BuildContext, DeviceArrays, KernelCall
from workbench.portable import grid_stride, portable_here
from workbench.portable.triton_check import TritonCompile

#: One token, one head of each kind, one pair: the smallest valid RoPE inputs (head_dim must be even).
WARMUP = {"tokens": 1, "heads": 1, "kv_heads": 1, "head_dim": 2}


def numba_kernel(t: type, layout: str) -> Any:
    """``rope(q, k, cos, sin, q_out, k_out)``: tokens over the cores; per token every q and k head, each
    pair rotated by the token's cos/sin (read once per token, reused by all heads)."""
    from numba import njit, prange

    split = layout == "half"

    @njit(parallel=True, fastmath=True)
    def rope(q, k, cos, sin, q_out, k_out):
        tokens, half = cos.shape
        step = 1 if split else 2
        partner = half if split else 1
        for tok in prange(tokens):
            c, s = cos[tok], sin[tok]
            for x, o in ((q, q_out), (k, k_out)):
                for h in range(x.shape[1]):
                    xr, orow = x[tok, h], o[tok, h]
                    for i in range(half):
                        a, b = xr[i * step], xr[i * step + partner]
                        orow[i * step] = a * c[i] - b * s[i]
                        orow[i * step + partner] = b * c[i] + a * s[i]
    return rope


def register_numba(op: KernelFolder, layout: str) -> None:
    """The numba variant of ``op`` (built by hand: the generic warm-up's head_dim = 1 is not a valid RoPE)."""
    @functools.cache
    def kernel_for(dtype: str) -> Any:
        from workbench.authoring.numba_math import numpy_dtype

        return disk_cached(numba_kernel(numpy_dtype(dtype), layout), salt=f"{layout}-{dtype}")

    @op.variant("numba", "numba", description="tokens over the cores (prange); each token's cos/sin reused by "
                                              "all its q and k heads")
    def build(ctx: BuildContext) -> KernelCall:
        kernel = kernel_for(ctx.dtype)
        names = ("q", "k", "cos", "sin")
        warm = op.spec.host_inputs(WARMUP, ctx.dtype)
        kernel(*[warm[n] for n in names], np.empty_like(warm["q"]), np.empty_like(warm["k"]))

        def run(inp: DeviceArrays, out: DeviceArrays) -> None:
            kernel(*[inp[n] for n in names], out["q_out"], out["k_out"])
        return run


def torch_half(q: Any, k: Any, cos: Any, sin: Any) -> tuple[Any, Any]:
    """Hugging Face's ``apply_rotary_pos_emb`` with ``rotate_half``; cos/sin duplicated to head_dim first."""
    import torch

    c = torch.cat((cos, cos), dim=-1).unsqueeze(1)
    s = torch.cat((sin, sin), dim=-1).unsqueeze(1)

    def rotate_half(x: Any) -> Any:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s


def torch_interleaved(q: Any, k: Any, cos: Any, sin: Any) -> tuple[Any, Any]:
    """Meta's LLaMA reference ``apply_rotary_emb``: pairs viewed as complex numbers times ``freqs_cis``, in
    float32 (complex64; complex128 for float64), cast back to the input's dtype."""
    import torch

    real = torch.float64 if q.dtype == torch.float64 else torch.float32
    freqs_cis = torch.complex(cos.to(real), sin.to(real)).unsqueeze(1)

    def apply(x: Any) -> Any:
        xc = torch.view_as_complex(x.to(real).reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs_cis).flatten(-2).to(x.dtype)

    return apply(q), apply(k)


def register_portable(op: KernelFolder, entry: str) -> None:
    """The portable variant of ``op``: ``entry`` (a ``.cu`` in its folder over ``wb_rope.h``), one thread
    per (token, head, pair) in a grid-stride loop."""
    args = ("q", "k", "cos", "sin", "q_out", "k_out", "heads", "kv_heads", "pairs", "n")
    portable_here(op, [grid_stride(entry, args)],
                  derived={"pairs": lambda s: s["head_dim"] // 2,
                           "n": lambda s: s["tokens"] * (s["heads"] + s["kv_heads"]) * (s["head_dim"] // 2)},
                  description="one thread per pair (grid-stride, BLOCK=256); a pair's cos/sin read per thread")


@functools.cache
def triton_kernel() -> Any:
    """The Triton RoPE kernel both layouts launch: one program per (token, head) row of q or of k, its
    pairs in one masked power-of-two block; ``INTERLEAVED`` (constexpr) picks the pairing."""
    import triton
    import triton.language as tl

    @triton.jit
    def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, nheads, pairs, INTERLEAVED: tl.constexpr,
                    BLOCK: tl.constexpr):
        t = tl.program_id(0)
        h = tl.program_id(1)
        i = tl.arange(0, BLOCK)
        mask = i < pairs
        c = tl.load(cos_ptr + t * pairs + i, mask=mask, other=0.0)
        s = tl.load(sin_ptr + t * pairs + i, mask=mask, other=0.0)
        base = (t * nheads + h) * 2 * pairs
        if INTERLEAVED:
            a_at = base + 2 * i
            b_at = a_at + 1
        else:
            a_at = base + i
            b_at = a_at + pairs
        a = tl.load(x_ptr + a_at, mask=mask, other=0.0)
        b = tl.load(x_ptr + b_at, mask=mask, other=0.0)
        tl.store(out_ptr + a_at, a * c - b * s, mask=mask)
        tl.store(out_ptr + b_at, b * c + a * s, mask=mask)

    return rope_kernel


def register_triton(op: KernelFolder, layout: str) -> None:
    """The Triton variant of ``op`` (float32): two launches, q's (tokens x heads) and k's (tokens x kv_heads)."""
    interleaved = layout == "interleaved"

    @op.variant("triton", "triton", dtypes=("float32",),
                description="one program per (token, head) row, its pairs in one masked block; q then k; float32")
    def build(ctx: BuildContext) -> KernelCall:
        import triton

        p = ctx.params
        kernel, pairs = triton_kernel(), p["head_dim"] // 2
        block = triton.next_power_of_2(max(pairs, 1))

        def run(inp: DeviceArrays, out: DeviceArrays) -> None:
            for x, o, heads in (("q", "q_out", p["heads"]), ("k", "k_out", p["kv_heads"])):
                kernel[(p["tokens"], heads)](inp[x], inp["cos"], inp["sin"], out[o], heads, pairs,
                                             INTERLEAVED=interleaved, BLOCK=block)
        return run


def triton_compiles(layout: str) -> tuple[Any, ...]:
    """``COMPILE`` for ``workbench compile-check``: a 128-wide head (64 pairs, one 64-lane block), 4 warps."""
    signature = {"x_ptr": "*fp32", "cos_ptr": "*fp32", "sin_ptr": "*fp32", "out_ptr": "*fp32", "nheads": "i32",
                 "pairs": "i32", "INTERLEAVED": "constexpr", "BLOCK": "constexpr"}
    return (TritonCompile(triton_kernel, signature, {"INTERLEAVED": layout == "interleaved", "BLOCK": 64},
                          label="head_dim=128"),)

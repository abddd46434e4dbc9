"""Variant builders both RoPE layouts share (``kernels/rope``, ``kernels/rope_interleaved``): a numba row
kernel and the torch forms. The layout is a closure constant, so each layout compiles to its own loop."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .authoring import KernelFolder, disk_cached
from .spec import BuildContext, KernelCall

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
        from .numba_math import numpy_dtype

        return disk_cached(numba_kernel(numpy_dtype(dtype), layout), salt=f"{layout}-{dtype}")

    @op.variant("numba", "numba", description="tokens over the cores (prange); each token's cos/sin reused by "
                                              "all its q and k heads")
    def build(ctx: BuildContext) -> KernelCall:
        kernel = kernel_for(ctx.dtype)
        names = ("q", "k", "cos", "sin")
        warm = op.spec.host_inputs(WARMUP, ctx.dtype)
        kernel(*[warm[n] for n in names], np.empty_like(warm["q"]), np.empty_like(warm["k"]))

        def run(inp: dict[str, Any], out: dict[str, Any]) -> None:
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
    from ..portable import grid_stride, portable_here

    args = ("q", "k", "cos", "sin", "q_out", "k_out", "heads", "kv_heads", "pairs", "n")
    portable_here(op, [grid_stride(entry, args)],
                  derived={"pairs": lambda s: s["head_dim"] // 2,
                           "n": lambda s: s["tokens"] * (s["heads"] + s["kv_heads"]) * (s["head_dim"] // 2)},
                  description="one thread per pair (grid-stride, BLOCK=256); a pair's cos/sin read per thread")

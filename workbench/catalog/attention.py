"""What the attention kernels (``attention_prefill``, ``attention_decode``) share.

Layout is torch's ``scaled_dot_product_attention`` one: ``[batch, heads, tokens, head_dim]``
for queries and outputs, ``[batch, kv_heads, tokens, head_dim]`` for keys and values.
Grouped-query attention: query head ``h`` reads KV head ``h // (heads // kv_heads)``, so
``heads`` must be a multiple of ``kv_heads`` (``kv_heads == heads`` is multi-head attention,
``kv_heads == 1`` multi-query). The score scale is ``1 / sqrt(head_dim)``.

The float64 reference materialises the scores; its error is far below any
tolerance (it is float64 throughout, from inputs already rounded to the run dtype).
The torch variants both kernels share (SDPA per backend, the naive composition) are
:mod:`workbench.authoring.attention_variants`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.catalog.spec import KernelSpec, Unsupported


@dataclass
class AttentionSpec(KernelSpec):
    """A KernelSpec whose sizes must also describe a valid head grouping."""

    def validate_params(self, params: Mapping[str, int]) -> dict[str, int]:
        p = super().validate_params(params)
        if p["heads"] % p["kv_heads"]:
            divisors = [d for d in range(1, p["heads"] + 1) if p["heads"] % d == 0]
            raise ValueError(f"kernel {self.name!r}: heads={p['heads']} is not a multiple of "
                             f"kv_heads={p['kv_heads']}; valid kv_heads for {p['heads']} heads: {divisors}")
        return p


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(q k^T / sqrt(d) [+ causal mask]) v, grouped-query, all in float64 (scores materialised).

    ``q`` is ``[b, heads, sq, d]``, ``k``/``v`` ``[b, kv_heads, sk, d]``; with ``causal`` query ``i``
    sees keys ``j <= i`` (``sq == sk``).
    """
    b, h, sq, d = q.shape
    kvh, sk = k.shape[1], k.shape[2]
    qg = q.astype(np.float64).reshape(b, kvh, h // kvh, sq, d)
    s = np.matmul(qg, k.astype(np.float64)[:, :, None].swapaxes(-1, -2)) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((sq, sk), dtype=bool)), s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    return np.matmul(s, v.astype(np.float64)[:, :, None]).reshape(b, h, sq, d)


def make_qkv(p: Mapping[str, int], q_tokens: int, kv_tokens: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """N(0, 1) queries, keys and values: scores q.k/sqrt(d) are then N(0, 1), as in a trained model's
    typical (not saturated) softmax."""
    b, h, kvh, d = p["batch"], p["heads"], p["kv_heads"], p["head_dim"]
    return {"q": rng.standard_normal((b, h, q_tokens, d)), "k": rng.standard_normal((b, kvh, kv_tokens, d)),
            "v": rng.standard_normal((b, kvh, kv_tokens, d))}


def llm_heads(shape: Mapping[str, int]) -> dict[str, int] | None:
    """``batch``, ``heads``, ``kv_heads`` and ``head_dim`` of an LLM shape dict (see ``workbench.sweep.suites``).

    ``heads`` defaults to hidden / 128, ``kv_heads`` to ``heads``, ``head_dim`` to hidden // heads;
    None when the heads do not group (heads not a multiple of kv_heads).
    """
    heads = int(shape.get("heads") or max(1, shape["hidden"] // 128))
    kv_heads = int(shape.get("kv_heads") or heads)
    head_dim = int(shape.get("head_dim") or shape["hidden"] // heads)
    if heads % kv_heads or head_dim < 1:
        return None
    return {"batch": int(shape["batch"]), "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim}


# --- numpy and cupy (both kernels) ------------------------------------------------------------------------------


def naive(xp: Any, q: Any, k: Any, v: Any, causal: bool) -> Any:
    """The naive composition an array user writes (numpy, or cupy as ``xp``): scores materialised
    ``[b, kv_heads, group, sq, sk]`` (KV heads broadcast, not copied), masked, softmaxed, times v.
    float16 is computed in float32 (numpy's float16 matmul accumulates in float16)."""
    work = xp.float32 if q.dtype == xp.float16 else q.dtype
    b, h, sq, d = q.shape
    kvh, sk = k.shape[1], k.shape[2]
    qg = q.astype(work, copy=False).reshape(b, kvh, h // kvh, sq, d)
    s = xp.matmul(qg, k.astype(work, copy=False)[:, :, None].swapaxes(-1, -2))
    s *= 1.0 / math.sqrt(d)
    if causal:
        s[..., ~xp.tril(xp.ones((sq, sk), dtype=bool))] = -xp.inf
    s -= s.max(axis=-1, keepdims=True)
    xp.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return xp.matmul(s, v.astype(work, copy=False)[:, :, None]).reshape(b, h, sq, d)


# --- portable kernels (both kernels) ------------------------------------------------------------------------------


def check_head_dim(dmax: int) -> Callable[[Mapping[str, int]], int]:
    """A ``derived`` size for portable kernels that stage head_dim-wide rows in fixed arrays: ``dmax``,
    or Unsupported (at build time, with the reason) when head_dim exceeds it."""
    def check(sizes: Mapping[str, int]) -> int:
        if sizes["head_dim"] > dmax:
            raise Unsupported(f"this kernel stages head_dim-wide rows in arrays of {dmax}; head_dim "
                              f"{sizes['head_dim']} is larger")
        return dmax
    return check

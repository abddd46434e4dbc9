"""What the attention kernels (``attention_prefill``, ``attention_decode``) share.

Layout is torch's ``scaled_dot_product_attention`` one: ``[batch, heads, tokens, head_dim]``
for queries and outputs, ``[batch, kv_heads, tokens, head_dim]`` for keys and values.
Grouped-query attention: query head ``h`` reads KV head ``h // (heads // kv_heads)``, so
``heads`` must be a multiple of ``kv_heads`` (``kv_heads == heads`` is multi-head attention,
``kv_heads == 1`` multi-query). The score scale is ``1 / sqrt(head_dim)``.

The float64 reference materialises the scores; its error is far below any
tolerance (it is float64 throughout, from inputs already rounded to the run dtype).
Nothing here imports torch until a torch variant is built.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .registry import get_kernel, variant
from .spec import BuildContext, KernelCall, KernelSpec, Unsupported

#: SDPA backends, by the variant-name suffix: ``torch-sdpa-<suffix>`` forces ``SDPBackend.<NAME>``.
SDPA_BACKENDS = {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "cudnn": "CUDNN_ATTENTION", "overrideable": "OVERRIDEABLE"}


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
    """``batch``, ``heads``, ``kv_heads`` and ``head_dim`` of an LLM shape dict (see ``workbench.suites``).

    ``heads`` defaults to hidden / 128, ``kv_heads`` to ``heads``, ``head_dim`` to hidden // heads;
    None when the heads do not group (heads not a multiple of kv_heads).
    """
    heads = int(shape.get("heads") or max(1, shape["hidden"] // 128))
    kv_heads = int(shape.get("kv_heads") or heads)
    head_dim = int(shape.get("head_dim") or shape["hidden"] // heads)
    if heads % kv_heads or head_dim < 1:
        return None
    return {"batch": int(shape["batch"]), "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim}


# --- torch variants (both kernels): the call as written, naive, and one per SDPA backend ----------------------------

#: (torch, inputs) -> (q, k, v) as 4-D [b, heads, tokens, d] views, and out-tensor -> output-shaped view.
Prepare = Callable[[Any, dict[str, Any]], tuple[Any, Any, Any]]


def _sdpa_call(torch: Any, causal: bool, gqa: bool) -> Callable[[Any, Any, Any], Any]:
    f = torch.nn.functional.scaled_dot_product_attention
    if gqa:
        return lambda q, k, v: f(q, k, v, is_causal=causal, enable_gqa=True)
    return lambda q, k, v: f(q, k, v, is_causal=causal)


def _sdpa_context(torch: Any, backend_name: str | None):
    import contextlib

    if backend_name is None:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    member = getattr(SDPBackend, backend_name, None)
    if member is None:
        raise Unsupported(f"torch {torch.__version__} has no SDPBackend.{backend_name}")
    return sdpa_kernel(member)


def register_torch_variants(kernel: str, prepare: Prepare, causal: bool, finish: Callable[[Any], Any]) -> None:
    """``torch-naive``, ``torch-sdpa`` (the dispatcher's choice; the library baseline) and
    ``torch-sdpa-<backend>`` for every SDPA backend, for ``kernel``.

    ``prepare`` turns the kernel's inputs into 4-D ``q, k, v``; ``finish`` the 4-D result into the
    kernel's output shape. GQA goes through ``enable_gqa=True`` (no copy of K/V); a backend that
    cannot run these inputs (device, dtype, head_dim, GQA) is ``unsupported`` with torch's own reason.
    """
    def sdpa_builder(backend_name: str | None) -> Callable[[BuildContext], KernelCall]:
        def build(ctx: BuildContext) -> KernelCall:
            import torch

            p = ctx.params
            call = _sdpa_call(torch, causal, p["kv_heads"] < p["heads"])
            example = prepare(torch, get_kernel(kernel).example_inputs(ctx.backend, p, ctx.dtype))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with _sdpa_context(torch, backend_name):
                        call(*example)
                except (RuntimeError, TypeError, NotImplementedError) as e:
                    why = "; ".join(dict.fromkeys(str(w.message).strip() for w in caught))
                    label = f"SDPBackend.{backend_name}" if backend_name else "scaled_dot_product_attention"
                    raise Unsupported(f"{label}: torch {torch.__version__} has no kernel of it for these inputs "
                                      f"on device {ctx.backend.device} ({ctx.dtype}, head_dim {p['head_dim']}"
                                      f"{', GQA' if p['kv_heads'] < p['heads'] else ''}); torch says: "
                                      f"{str(e).strip()}{f' [{why}]' if why else ''}") from None

            def run(inp: dict[str, Any], out: dict[str, Any]) -> Any:
                with _sdpa_context(torch, backend_name):
                    return finish(call(*prepare(torch, inp)))
            return run
        return build

    variant(kernel, "torch-sdpa", "torch", library=True,
            description="torch.nn.functional.scaled_dot_product_attention as a user calls it (the dispatcher "
                        "picks the backend); GQA by enable_gqa=True")(sdpa_builder(None))
    for suffix, name in SDPA_BACKENDS.items():
        variant(kernel, f"torch-sdpa-{suffix}", "torch",
                description=f"scaled_dot_product_attention forced to SDPBackend.{name} (sdpa_kernel); GQA by "
                            f"enable_gqa=True; unsupported, with torch's reason, where the device lacks it"
                )(sdpa_builder(name))

    def naive_build(ctx: BuildContext) -> KernelCall:
        import torch

        def run(inp: dict[str, Any], out: dict[str, Any]) -> Any:
            q, k, v = prepare(torch, inp)
            b, h, sq, d = q.shape
            kvh, sk = k.shape[1], k.shape[2]
            qg = q.reshape(b, kvh, h // kvh, sq, d)
            s = torch.matmul(qg, k.unsqueeze(2).transpose(-1, -2)) * (1.0 / math.sqrt(d))
            if causal:
                mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device).triu(1)
                s = s.masked_fill(mask, float("-inf"))
            s = torch.softmax(s, dim=-1)
            return finish(torch.matmul(s, v.unsqueeze(2)).reshape(b, h, sq, d))
        return run

    variant(kernel, "torch-naive", "torch",
            description="scores materialised: q k^T (KV heads broadcast to their query-head group, no copy), "
                        "mask, softmax, @ v")(naive_build)


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

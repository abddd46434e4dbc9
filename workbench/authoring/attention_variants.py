"""The torch variants both attention kernels share (``attention_prefill``, ``attention_decode``).

``torch-sdpa`` (the call as a user writes it: the library baseline), ``torch-sdpa-<backend>`` for every SDPA
backend, and ``torch-naive`` (the scores materialised). Layouts and the reference are in
:mod:`workbench.catalog.attention`. torch is imported only when a variant is built.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any

from workbench.catalog.registry import get_kernel, variant
from workbench.catalog.spec import BuildContext, KernelCall, Unsupported

#: SDPA backends, by the variant-name suffix: ``torch-sdpa-<suffix>`` forces ``SDPBackend.<NAME>``.
SDPA_BACKENDS = {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "cudnn": "CUDNN_ATTENTION", "overrideable": "OVERRIDEABLE"}

#: (torch, inputs) -> (q, k, v) as 4-D [b, heads, tokens, d] views, and out-tensor -> output-shaped view.
Prepare = Callable[[Any, dict[str, Any]], tuple[Any, Any, Any]]


def _sdpa_call(torch: Any, causal: bool, gqa: bool) -> Callable[[Any, Any, Any], Any]:
    f = torch.nn.functional.scaled_dot_product_attention
    if gqa:
        return lambda q, k, v: f(q, k, v, is_causal=causal, enable_gqa=True)
    return lambda q, k, v: f(q, k, v, is_causal=causal)


def _sdpa_context(torch: Any, backend_name: str | None) -> Any:
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
    variant(kernel, "torch-sdpa", "torch", library=True,
            description="torch.nn.functional.scaled_dot_product_attention as a user calls it (the dispatcher "
                        "picks the backend); GQA by enable_gqa=True")(
        _sdpa_builder(kernel, prepare, causal, finish, None))
    for suffix, name in SDPA_BACKENDS.items():
        variant(kernel, f"torch-sdpa-{suffix}", "torch",
                description=f"scaled_dot_product_attention forced to SDPBackend.{name} (sdpa_kernel); GQA by "
                            f"enable_gqa=True; unsupported, with torch's reason, where the device lacks it"
                )(_sdpa_builder(kernel, prepare, causal, finish, name))
    variant(kernel, "torch-naive", "torch",
            description="scores materialised: q k^T (KV heads broadcast to their query-head group, no copy), "
                        "mask, softmax, @ v")(_naive_builder(prepare, causal, finish))


def _sdpa_builder(kernel: str, prepare: Prepare, causal: bool, finish: Callable[[Any], Any],
                  backend_name: str | None) -> Callable[[BuildContext], KernelCall]:
    """The build of an SDPA variant (``backend_name``: the forced SDPBackend, None for the dispatcher's choice):
    it calls SDPA once on the kernel's example inputs, so a backend without a kernel for them is ``unsupported``
    with torch's reason before anything is timed."""
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


def _naive_builder(prepare: Prepare, causal: bool,
                   finish: Callable[[Any], Any]) -> Callable[[BuildContext], KernelCall]:
    """The build of ``torch-naive``: the scores materialised, each KV head broadcast to its query-head group."""
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
    return naive_build

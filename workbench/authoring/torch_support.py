"""torch variants: an eager call, ``torch.compile`` compiled once per shape before any timing, or both.

``torch_variant(op, name, call, description)`` registers ``call(torch, inputs, outputs)``;
``torch_compile_variant(op, fn, description)`` registers ``torch.compile(fn)``; ``torch_trio`` registers the
library call, its ``out=`` form and ``torch.compile`` in one call.

``torch.compile`` specialises on shapes and dtypes (``dynamic=False``), so
each (kernel, params, dtype, device) is one graph. The first call compiles —
about 30 s on two CPU cores — so the builder makes that call on the run's own
shapes, and the harness never times a compile. ``fullgraph=True`` turns a
graph break into an error instead of a silent partial fallback to eager, and
dynamo's per-function recompile limit (8 by default) is raised, because a
sweep legitimately compiles one function for many shapes; past the default
limit dynamo would quietly run eager code under a "compiled" label.

torch itself is imported only when a variant is built, never when the catalog loads.
"""

from __future__ import annotations

import functools
import inspect
import shutil
from collections.abc import Callable
from typing import Any

from workbench.catalog.authoring import KernelFolder
from workbench.catalog.registry import get_kernel
from workbench.catalog.spec import BuildContext, DeviceArrays, KernelCall, Unsupported
from workbench.catalog.verbs.helpers import folder_helper
from workbench.catalog.verbs.torch_verbs import TorchCall

#: Device types TorchInductor generates code for.
INDUCTOR_DEVICES = ("cpu", "cuda", "xpu", "mps")
RECOMPILE_LIMIT = 256


def example_inputs(kernel: str, ctx: BuildContext) -> DeviceArrays:
    """Inputs of the run's shapes, dtype and device (seed 0), to trigger compilation."""
    return get_kernel(kernel).example_inputs(ctx.backend, ctx.params, ctx.dtype, seed=0)


def compile_for(ctx: BuildContext, kernel: str, fn: Callable[..., Any],
                arg_names: tuple[str, ...]) -> Callable[..., Any]:
    """``torch.compile(fn)``, already compiled for ``ctx`` by one call on example inputs."""
    import torch
    import torch._dynamo.config as dynamo_config

    device_type = torch.device(ctx.backend.device).type
    if device_type not in INDUCTOR_DEVICES:
        raise Unsupported(f"torch.compile (inductor) does not generate code for device type {device_type!r}")
    if device_type == "cpu" and not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        raise Unsupported("torch.compile on the CPU needs a C++ compiler (g++ or clang++) on PATH")
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(dynamo_config, name):
            setattr(dynamo_config, name, max(getattr(dynamo_config, name), RECOMPILE_LIMIT))
    compiled = torch.compile(fn, fullgraph=True, dynamic=False)
    example = example_inputs(kernel, ctx)
    compiled(*(example[n] for n in arg_names))
    return compiled


@folder_helper("torch")
def torch_variant(op: KernelFolder, name: str, call: TorchCall, description: str, *, library: bool = False,
                  mode: str = "eager") -> TorchCall:
    """An eager torch variant of ``op`` running ``call(torch, inputs, outputs)``; torch is imported at build."""
    def build(ctx: BuildContext) -> KernelCall:
        import torch

        return functools.partial(call, torch)

    build.__module__ = getattr(call, "__module__", __name__)
    op.variant(name, "torch", mode=mode, library=library, description=description)(build)
    return call


@folder_helper("torch_compile")
def torch_compile_variant(op: KernelFolder, fn: Callable[..., Any], description: str,
                          name: str = "torch-compile") -> Callable[..., Any]:
    """``torch.compile(fn)`` as a variant of ``op``, compiled at build time for the run's shapes.

    ``fn``'s parameters are spec input names; what it returns follows the rules for ``run()`` (a tensor, a
    tuple in output order, or a dict).
    """
    arg_names = tuple(inspect.signature(fn).parameters)

    def build(ctx: BuildContext) -> KernelCall:
        compiled = compile_for(ctx, op.name, fn, arg_names)

        def run(inp: DeviceArrays, out: DeviceArrays) -> Any:
            return compiled(*[inp[n] for n in arg_names])
        return run

    build.__module__ = fn.__module__
    op.variant(name, "torch", mode="compiled", description=description)(build)
    return fn


@folder_helper("torch_trio")
def torch_trio(op: KernelFolder, library: TorchCall, library_doc: str, *, out: TorchCall | None = None,
               out_doc: str = "", compiled: Callable[..., Any] | None = None, compile_doc: str = "",
               library_name: str = "torch") -> None:
    """The three torch variants most operations have, in one call.

    ``library`` (variant ``torch``, the library baseline): the call a user writes, e.g.
    ``lambda torch, i, o: torch.softmax(i["x"], dim=1)``. ``out`` (variant ``torch-out``): the same kernel
    writing into the preallocated output, where torch has such a form and ``library`` does not already use
    it. ``compiled`` (variant ``torch-compile``): a tensor function of the inputs for ``torch.compile``.
    """
    torch_variant(op, library_name, library, library_doc, library=True)
    if out is not None:
        torch_variant(op, "torch-out", out, out_doc)
    if compiled is not None:
        torch_compile_variant(op, compiled, compile_doc)

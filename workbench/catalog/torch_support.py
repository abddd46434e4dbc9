"""What the catalog's ``torch-compile`` variants share: compile once per shape, before any timing.

``torch.compile`` specialises on shapes and dtypes (``dynamic=False``), so
each (kernel, params, dtype, device) is one graph. The first call compiles —
about 30 s on two CPU cores — so the builder makes that call on the run's own
shapes, and the harness never times a compile. ``fullgraph=True`` turns a
graph break into an error instead of a silent partial fallback to eager, and
dynamo's per-function recompile limit (8 by default) is raised, because a
sweep legitimately compiles one function for many shapes; past the default
limit dynamo would quietly run eager code under a "compiled" label.

Imported only by ``torch_variants.py`` builders, never when the catalog loads.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

from .registry import get_kernel
from .spec import BuildContext, Unsupported

#: Device types TorchInductor generates code for.
INDUCTOR_DEVICES = ("cpu", "cuda", "xpu", "mps")
RECOMPILE_LIMIT = 256


def example_inputs(kernel: str, ctx: BuildContext) -> dict[str, Any]:
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

"""gelu_tanh with torch on any torch device.

- ``torch``: ``F.gelu(x, approximate='tanh')`` as a user writes it; returns a
  new tensor, so the allocation (and, on the CPU, the page faults of a fresh
  large buffer) is part of the measured cost.
- ``torch-out``: the same ATen kernel writing into the preallocated output
  (``torch.ops.aten.gelu.out``): the kernel alone.
- ``torch-compile``: ``torch.compile`` of the ``F.gelu`` call.
"""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _gelu(x):
    import torch.nn.functional as F

    return F.gelu(x, approximate="tanh")


@variant("gelu_tanh", "torch", "torch", library=True, dtypes=DTYPES)
def torch_gelu(ctx):
    """F.gelu(x, approximate='tanh'), returning a new tensor."""
    import torch.nn.functional as F

    def run(inp, out):
        return F.gelu(inp["x"], approximate="tanh")
    return run


@variant("gelu_tanh", "torch-out", "torch", dtypes=DTYPES)
def torch_gelu_out(ctx):
    """aten gelu(approximate='tanh') into the preallocated output: no allocation."""
    import torch

    def run(inp, out):
        torch.ops.aten.gelu.out(inp["x"], approximate="tanh", out=out["out"])
    return run


@variant("gelu_tanh", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of F.gelu(x, approximate='tanh')."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "gelu_tanh", _gelu, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

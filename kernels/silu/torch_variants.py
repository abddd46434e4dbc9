"""silu with torch on any torch device: F.silu, its out= form, torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _silu(x):
    import torch.nn.functional as F

    return F.silu(x)


@variant("silu", "torch", "torch", library=True, dtypes=DTYPES)
def torch_silu(ctx):
    """F.silu(x), returning a new tensor."""
    import torch.nn.functional as F

    def run(inp, out):
        return F.silu(inp["x"])
    return run


@variant("silu", "torch-out", "torch", dtypes=DTYPES)
def torch_silu_out(ctx):
    """aten silu into the preallocated output: no allocation."""
    import torch

    def run(inp, out):
        torch.ops.aten.silu.out(inp["x"], out=out["out"])
    return run


@variant("silu", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of F.silu(x)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "silu", _silu, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

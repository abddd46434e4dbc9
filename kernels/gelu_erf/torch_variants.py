"""gelu_erf (exact GELU) with torch on any torch device: F.gelu, its out= form, torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _gelu(x):
    import torch.nn.functional as F

    return F.gelu(x)


@variant("gelu_erf", "torch", "torch", library=True, dtypes=DTYPES)
def torch_gelu(ctx):
    """F.gelu(x) (approximate='none'), returning a new tensor."""
    import torch.nn.functional as F

    def run(inp, out):
        return F.gelu(inp["x"])
    return run


@variant("gelu_erf", "torch-out", "torch", dtypes=DTYPES)
def torch_gelu_out(ctx):
    """aten gelu into the preallocated output: no allocation."""
    import torch

    def run(inp, out):
        torch.ops.aten.gelu.out(inp["x"], out=out["out"])
    return run


@variant("gelu_erf", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of F.gelu(x)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "gelu_erf", _gelu, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

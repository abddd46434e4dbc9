"""sum with torch on any torch device: torch.sum into the output, and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _sum(x):
    return x.sum(dim=0, keepdim=True)


@variant("sum", "torch", "torch", library=True, dtypes=DTYPES)
def torch_sum(ctx):
    """torch.sum(x, dim=0, keepdim=True, out=out): cascade summation, float accumulation for halves."""
    import torch

    def run(inp, out):
        torch.sum(inp["x"], dim=0, keepdim=True, out=out["out"])
    return run


@variant("sum", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of x.sum()."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "sum", _sum, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

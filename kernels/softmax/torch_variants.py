"""softmax with torch on any torch device: torch.softmax, its out= form, torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _softmax(x):
    return x.softmax(dim=1)


@variant("softmax", "torch", "torch", library=True, dtypes=DTYPES)
def torch_softmax(ctx):
    """torch.softmax(x, dim=1), returning a new tensor."""
    import torch

    def run(inp, out):
        return torch.softmax(inp["x"], dim=1)
    return run


@variant("softmax", "torch-out", "torch", dtypes=DTYPES)
def torch_softmax_out(ctx):
    """torch.softmax(x, 1, out=out): the library kernel without the allocation."""
    import torch

    def run(inp, out):
        torch.softmax(inp["x"], 1, out=out["out"])
    return run


@variant("softmax", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of x.softmax(dim=1)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "softmax", _softmax, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

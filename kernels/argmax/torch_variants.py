"""argmax with torch on any torch device: torch.argmax into the int64 output, and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _argmax(x):
    return x.argmax(dim=1)


@variant("argmax", "torch", "torch", library=True, dtypes=DTYPES)
def torch_argmax(ctx):
    """torch.argmax(x, dim=1, out=out)."""
    import torch

    def run(inp, out):
        torch.argmax(inp["x"], dim=1, out=out["out"])
    return run


@variant("argmax", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of x.argmax(dim=1)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "argmax", _argmax, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

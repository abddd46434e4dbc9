"""relu with torch on any torch device: torch.relu (new tensor), and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _relu(x):
    return x.relu()


@variant("relu", "torch", "torch", library=True, dtypes=DTYPES)
def torch_relu(ctx):
    """torch.relu(x): returns a new tensor (torch.relu has no out= form), allocation included."""
    import torch

    def run(inp, out):
        return torch.relu(inp["x"])
    return run


@variant("relu", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of x.relu()."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "relu", _relu, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

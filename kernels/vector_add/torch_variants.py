"""vector_add with torch on any torch device: torch.add into the output, and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _add(a, b):
    return a + b


@variant("vector_add", "torch", "torch", library=True, dtypes=DTYPES)
def torch_add(ctx):
    """torch.add(a, b, out=out)."""
    import torch

    def run(inp, out):
        torch.add(inp["a"], inp["b"], out=out["out"])
    return run


@variant("vector_add", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of a + b (returns a new tensor)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "vector_add", _add, ("a", "b"))

    def run(inp, out):
        return fn(inp["a"], inp["b"])
    return run

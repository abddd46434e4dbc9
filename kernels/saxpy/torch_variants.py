"""saxpy with torch on any torch device: torch.add with alpha, and torch.compile."""

from workbench.catalog import variant

from workbench_catalog.saxpy.spec import ALPHA  # noqa: E402

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _saxpy(x, y):
    return y + ALPHA * x


@variant("saxpy", "torch", "torch", library=True, dtypes=DTYPES)
def torch_saxpy(ctx):
    """torch.add(y, x, alpha=1.7, out=out): one fused library call into the output buffer."""
    import torch

    def run(inp, out):
        torch.add(inp["y"], inp["x"], alpha=ALPHA, out=out["out"])
    return run


@variant("saxpy", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of y + 1.7 * x (returns a new tensor)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "saxpy", _saxpy, ("x", "y"))

    def run(inp, out):
        return fn(inp["x"], inp["y"])
    return run

"""transpose with torch on any torch device: x.t().contiguous() and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _transpose(x):
    return x.t().contiguous()


@variant("transpose", "torch", "torch", library=True, dtypes=DTYPES)
def torch_transpose(ctx):
    """x.t().contiguous(): a strided view materialised by torch's copy kernel (new tensor)."""
    def run(inp, out):
        return inp["x"].t().contiguous()
    return run


@variant("transpose", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of x.t().contiguous() (inductor emits a tiled copy)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "transpose", _transpose, ("x",))

    def run(inp, out):
        return fn(inp["x"])
    return run

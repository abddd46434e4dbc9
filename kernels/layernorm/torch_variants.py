"""layernorm with torch on any torch device: F.layer_norm and torch.compile."""

from workbench.catalog import variant

from workbench_catalog.layernorm.spec import EPS  # noqa: E402

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _layernorm(x, weight, bias):
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


@variant("layernorm", "torch", "torch", library=True, dtypes=DTYPES)
def torch_layernorm(ctx):
    """F.layer_norm(x, (cols,), weight, bias, 1e-5), returning a new tensor."""
    import torch.nn.functional as F

    shape = (ctx.params["cols"],)

    def run(inp, out):
        return F.layer_norm(inp["x"], shape, inp["weight"], inp["bias"], EPS)
    return run


@variant("layernorm", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of F.layer_norm."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "layernorm", _layernorm, ("x", "weight", "bias"))

    def run(inp, out):
        return fn(inp["x"], inp["weight"], inp["bias"])
    return run

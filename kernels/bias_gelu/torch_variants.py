"""bias_gelu with torch on any torch device: eager (unfused: x + bias is materialised) and torch.compile (fused)."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _bias_gelu(x, bias):
    import torch.nn.functional as F

    return F.gelu(x + bias, approximate="tanh")


@variant("bias_gelu", "torch-unfused", "torch", library=True, dtypes=DTYPES)
def torch_unfused(ctx):
    """F.gelu(x + bias, approximate='tanh'): two kernels, the sum goes through memory."""
    import torch.nn.functional as F

    def run(inp, out):
        return F.gelu(inp["x"] + inp["bias"], approximate="tanh")
    return run


@variant("bias_gelu", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of the same expression: inductor fuses the add into the gelu loop."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "bias_gelu", _bias_gelu, ("x", "bias"))

    def run(inp, out):
        return fn(inp["x"], inp["bias"])
    return run

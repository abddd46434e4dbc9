"""rmsnorm with torch on any torch device: F.rms_norm, the hand-written (HF LLaMA) form, torch.compile."""

from workbench.catalog import variant

from workbench_catalog.rmsnorm.spec import EPS  # noqa: E402

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _rmsnorm_unfused(x, weight):
    import torch

    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


@variant("rmsnorm", "torch", "torch", library=True, dtypes=DTYPES)
def torch_rmsnorm(ctx):
    """F.rms_norm(x, (cols,), weight, 1e-6), returning a new tensor."""
    import torch.nn.functional as F

    shape = (ctx.params["cols"],)

    def run(inp, out):
        return F.rms_norm(inp["x"], shape, inp["weight"], EPS)
    return run


@variant("rmsnorm", "torch-unfused", "torch", dtypes=DTYPES)
def torch_unfused(ctx):
    """x * rsqrt(mean(x^2) + eps) * weight as in Hugging Face's LlamaRMSNorm: four kernels, three temporaries."""
    def run(inp, out):
        return _rmsnorm_unfused(inp["x"], inp["weight"])
    return run


@variant("rmsnorm", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of the hand-written form: inductor fuses it into one row kernel."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "rmsnorm", _rmsnorm_unfused, ("x", "weight"))

    def run(inp, out):
        return fn(inp["x"], inp["weight"])
    return run

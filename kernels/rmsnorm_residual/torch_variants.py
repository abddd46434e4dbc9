"""rmsnorm_residual with torch on any torch device: eager (add, then F.rms_norm) and torch.compile (fused)."""

from workbench.catalog import variant

from workbench_catalog.rmsnorm_residual.spec import EPS  # noqa: E402

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _add_rmsnorm(x, residual, weight):
    import torch

    h = x + residual
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * weight, h


@variant("rmsnorm_residual", "torch-unfused", "torch", library=True, dtypes=DTYPES)
def torch_unfused(ctx):
    """torch.add(x, residual, out=residual_out), then F.rms_norm reading it back."""
    import torch
    import torch.nn.functional as F

    shape = (ctx.params["cols"],)

    def run(inp, out):
        h = torch.add(inp["x"], inp["residual"], out=out["residual_out"])
        return {"out": F.rms_norm(h, shape, inp["weight"], EPS), "residual_out": h}
    return run


@variant("rmsnorm_residual", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of add + rmsnorm: one fused row kernel writing both outputs."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "rmsnorm_residual", _add_rmsnorm, ("x", "residual", "weight"))

    def run(inp, out):
        y, h = fn(inp["x"], inp["residual"], inp["weight"])
        return {"out": y, "residual_out": h}
    return run

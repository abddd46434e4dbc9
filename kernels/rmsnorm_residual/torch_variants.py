"""rmsnorm_residual with torch on any torch device: eager (add, then F.rms_norm) and torch.compile (fused)."""
from workbench.catalog import kernel_here

from .spec import EPS


def _add_rmsnorm(x, residual, weight):
    import torch

    h = x + residual
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * weight, h


def _unfused(torch, inp, out):
    h = torch.add(inp["x"], inp["residual"], out=out["residual_out"])
    return {"out": torch.nn.functional.rms_norm(h, h.shape[-1:], inp["weight"], EPS), "residual_out": h}


kernel_here(__file__).torch_trio(
    _unfused, "torch.add(x, residual, out=residual_out), then F.rms_norm reading it back.",
    library_name="torch-unfused", compiled=_add_rmsnorm,
    compile_doc="torch.compile of add + rmsnorm: one fused row kernel writing both outputs.")

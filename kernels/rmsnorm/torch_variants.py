"""rmsnorm with torch on any torch device: F.rms_norm, the hand-written (HF LLaMA) form, torch.compile."""
from workbench.catalog import kernel_here

from .spec import EPS

op = kernel_here(__file__)


def _rmsnorm_unfused(x, weight):
    import torch

    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


op.torch_trio(lambda torch, i, o: torch.nn.functional.rms_norm(i["x"], i["x"].shape[-1:], i["weight"], EPS),
              "F.rms_norm(x, (cols,), weight, 1e-6), returning a new tensor.", compiled=_rmsnorm_unfused,
              compile_doc="torch.compile of the hand-written form: inductor fuses it into one row kernel.")
op.torch("torch-unfused", lambda torch, i, o: _rmsnorm_unfused(i["x"], i["weight"]),
         "x * rsqrt(mean(x^2) + eps) * weight as in Hugging Face's LlamaRMSNorm: four kernels, three temporaries.")

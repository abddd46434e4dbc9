"""layernorm with torch on any torch device: F.layer_norm and torch.compile."""
from workbench.catalog import kernel_here

from .spec import EPS


def _layernorm(x, weight, bias):
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.nn.functional.layer_norm(i["x"], i["x"].shape[-1:], i["weight"], i["bias"], EPS),
    "F.layer_norm(x, (cols,), weight, bias, 1e-5), returning a new tensor.",
    compiled=_layernorm, compile_doc="torch.compile of F.layer_norm.")

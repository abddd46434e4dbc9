"""gelu_erf (exact GELU) with torch on any torch device: F.gelu, its out= form, torch.compile."""
from workbench.catalog import kernel_here


def _gelu(x):
    import torch.nn.functional as F

    return F.gelu(x)


kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.nn.functional.gelu(i["x"]), "F.gelu(x) (approximate='none'), returning a new tensor.",
    out=lambda torch, i, o: torch.ops.aten.gelu.out(i["x"], out=o["out"]),
    out_doc="aten gelu into the preallocated output: no allocation.",
    compiled=_gelu, compile_doc="torch.compile of F.gelu(x).")

"""silu with torch on any torch device: F.silu, its out= form, torch.compile."""
from workbench.catalog import kernel_here


def _silu(x):
    import torch.nn.functional as F

    return F.silu(x)


kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.nn.functional.silu(i["x"]), "F.silu(x), returning a new tensor.",
    out=lambda torch, i, o: torch.ops.aten.silu.out(i["x"], out=o["out"]),
    out_doc="aten silu into the preallocated output: no allocation.",
    compiled=_silu, compile_doc="torch.compile of F.silu(x).")

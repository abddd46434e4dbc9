"""geglu with torch on any torch device: F.gelu(gate) * up (exact GELU, torch's default), and torch.compile."""
from workbench.catalog import kernel_here


def _geglu(gate, up):
    import torch.nn.functional as F

    return F.gelu(gate) * up


kernel_here(__file__).torch_trio(
    lambda torch, i, o: _geglu(i["gate"], i["up"]), "F.gelu(gate) * up (approximate='none'): two kernels.",
    compiled=_geglu, compile_doc="torch.compile of F.gelu(gate) * up: one fused kernel.")

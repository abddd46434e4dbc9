"""swiglu with torch on any torch device: F.silu(gate) * up as Hugging Face's LlamaMLP writes it, and
torch.compile of it (inductor fuses the two kernels into one pass)."""
from workbench.catalog import kernel_here


def _swiglu(gate, up):
    import torch.nn.functional as F

    return F.silu(gate) * up


kernel_here(__file__).torch_trio(
    lambda torch, i, o: _swiglu(i["gate"], i["up"]), "F.silu(gate) * up: two kernels, one temporary.",
    compiled=_swiglu, compile_doc="torch.compile of F.silu(gate) * up: one fused kernel.")

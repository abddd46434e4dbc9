"""sum with torch on any torch device: torch.sum into the output, and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.sum(i["x"], dim=0, keepdim=True, out=o["out"]),
    "torch.sum(x, dim=0, keepdim=True, out=out): cascade summation, float accumulation for halves.",
    compiled=lambda x: x.sum(dim=0, keepdim=True), compile_doc="torch.compile of x.sum().")

"""argmax with torch on any torch device: torch.argmax into the int64 output, and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.argmax(i["x"], dim=1, out=o["out"]), "torch.argmax(x, dim=1, out=out).",
    compiled=lambda x: x.argmax(dim=1), compile_doc="torch.compile of x.argmax(dim=1).")

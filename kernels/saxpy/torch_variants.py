"""saxpy with torch on any torch device: torch.add with alpha, and torch.compile."""
from workbench.catalog import kernel_here

from .spec import ALPHA

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.add(i["y"], i["x"], alpha=ALPHA, out=o["out"]),
    "torch.add(y, x, alpha=1.7, out=out): one fused library call into the output buffer.",
    compiled=lambda x, y: y + ALPHA * x, compile_doc="torch.compile of y + 1.7 * x (returns a new tensor).")

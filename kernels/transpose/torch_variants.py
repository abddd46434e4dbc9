"""transpose with torch on any torch device: x.t().contiguous() and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: i["x"].t().contiguous(),
    "x.t().contiguous(): a strided view materialised by torch's copy kernel (new tensor).",
    compiled=lambda x: x.t().contiguous(),
    compile_doc="torch.compile of x.t().contiguous() (inductor emits a tiled copy).")

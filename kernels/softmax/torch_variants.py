"""softmax with torch on any torch device: torch.softmax, its out= form, torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.softmax(i["x"], dim=1), "torch.softmax(x, dim=1), returning a new tensor.",
    out=lambda torch, i, o: torch.softmax(i["x"], 1, out=o["out"]),
    out_doc="torch.softmax(x, 1, out=out): the library kernel without the allocation.",
    compiled=lambda x: x.softmax(dim=1), compile_doc="torch.compile of x.softmax(dim=1).")

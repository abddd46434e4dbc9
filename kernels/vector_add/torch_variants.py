"""vector_add with torch on any torch device: torch.add into the output, and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.add(i["a"], i["b"], out=o["out"]), "torch.add(a, b, out=out).",
    compiled=lambda a, b: a + b, compile_doc="torch.compile of a + b (returns a new tensor).")

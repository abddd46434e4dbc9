"""relu with torch on any torch device: torch.relu (new tensor), and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(lambda torch, i, o: torch.relu(i["x"]), "torch.relu(x): returns a new tensor "
                                 "(torch.relu has no out= form), allocation included.",
                                 compiled=lambda x: x.relu(), compile_doc="torch.compile of x.relu().")

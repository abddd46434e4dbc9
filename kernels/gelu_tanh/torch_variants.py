"""gelu_tanh with torch on any torch device.

- ``torch``: ``F.gelu(x, approximate='tanh')`` as a user writes it; returns a
  new tensor, so the allocation (and, on the CPU, the page faults of a fresh
  large buffer) is part of the measured cost.
- ``torch-out``: the same ATen kernel writing into the preallocated output
  (``torch.ops.aten.gelu.out``): the kernel alone.
- ``torch-compile``: ``torch.compile`` of the ``F.gelu`` call.
"""
from workbench.catalog import kernel_here


def _gelu(x):
    import torch.nn.functional as F

    return F.gelu(x, approximate="tanh")


kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.nn.functional.gelu(i["x"], approximate="tanh"),
    "F.gelu(x, approximate='tanh'), returning a new tensor.",
    out=lambda torch, i, o: torch.ops.aten.gelu.out(i["x"], approximate="tanh", out=o["out"]),
    out_doc="aten gelu(approximate='tanh') into the preallocated output: no allocation.",
    compiled=_gelu, compile_doc="torch.compile of F.gelu(x, approximate='tanh').")

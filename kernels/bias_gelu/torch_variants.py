"""bias_gelu with torch on any torch device: eager (unfused: x + bias is materialised) and torch.compile (fused)."""
from workbench.catalog import kernel_here


def _bias_gelu(x, bias):
    import torch.nn.functional as F

    return F.gelu(x + bias, approximate="tanh")


kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.nn.functional.gelu(i["x"] + i["bias"], approximate="tanh"),
    "F.gelu(x + bias, approximate='tanh'): two kernels, the sum goes through memory.", library_name="torch-unfused",
    compiled=_bias_gelu, compile_doc="torch.compile of the same expression: inductor fuses the add into the gelu loop.")

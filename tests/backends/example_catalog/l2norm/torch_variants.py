"""l2norm with torch: x * rsqrt(sum(x^2) + eps), and torch.compile of it."""
from workbench.catalog import kernel_here

from .spec import EPS


def _l2norm(x):
    return x * (x * x).sum(-1, keepdim=True).add(EPS).rsqrt()


kernel_here(__file__).torch_trio(lambda torch, i, o: _l2norm(i["x"]), "x * rsqrt(sum(x^2) + eps): three kernels.",
                                 compiled=_l2norm, compile_doc="torch.compile of the same expression.")

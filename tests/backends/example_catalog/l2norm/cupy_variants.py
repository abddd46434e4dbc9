"""l2norm with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.xp import accumulate

from .spec import EPS


@kernel_here(__file__).cupy("x / sqrt(sum(x^2) + eps) with a cupy reduction (float16 in float32), eager.")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        xp.divide(x, xp.sqrt((x * x).sum(axis=1, keepdims=True) + EPS), out=out["out"])
    return run

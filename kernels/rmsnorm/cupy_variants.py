"""rmsnorm with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.xp import accumulate

from .spec import EPS


@kernel_here(__file__).cupy("x / sqrt(mean(x^2) + eps) * weight with a cupy reduction (float16 in float32), eager.")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        ms = (x * x).mean(axis=1, keepdims=True)
        ms += EPS
        xp.sqrt(ms, out=ms)
        y = x / ms
        xp.multiply(y, inp["weight"], out=out["out"])
    return run

"""gelu_tanh with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here

from .spec import COEF, SQRT_2_OVER_PI


@kernel_here(__file__).cupy("0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715x^3))) as eager cupy ufuncs on one temporary "
                            "(9 launches).")
def make_run(xp, special=None):
    def run(inp, out):
        x, o = inp["x"], out["out"]
        t = x * x
        t *= COEF
        t += 1.0
        t *= x
        t *= SQRT_2_OVER_PI
        xp.tanh(t, out=t)
        t += 1.0
        t *= x
        xp.multiply(t, 0.5, out=o)
    return run

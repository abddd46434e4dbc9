"""gelu_tanh with CuPy on an NVIDIA/AMD GPU: one ElementwiseKernel (``cupy``, CuPy's idiomatic best), and the
chain of ufuncs (``cupy-unfused``); the chain's ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.cupy_fused import compute_type, gelu_tanh_kernel

from .spec import COEF, SQRT_2_OVER_PI

op = kernel_here(__file__)


@op.cupy("0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715x^3))) as one cupy.ElementwiseKernel (float16 computed in float): "
         "one read and one write per element, one launch.")
def make_fused(cupy, special=None):
    def run(inp, out):
        x = inp["x"]
        gelu_tanh_kernel(cupy, compute_type(x.dtype))(x, out["out"])
    return run


@op.cupy("0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715x^3))) as eager cupy ufuncs on one temporary (9 launches).",
         name="cupy-unfused")
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

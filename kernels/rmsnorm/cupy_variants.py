"""rmsnorm with CuPy on an NVIDIA/AMD GPU: a ReductionKernel (row mean of x^2) and one ElementwiseKernel
(``cupy``, CuPy's idiomatic best: two launches, no temporary of the row's size), and the chain of cupy reductions
and ufuncs (``cupy-unfused``); the chain's ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.cupy_fused import compute_type, rmsnorm_kernels
from workbench.catalog.xp import accumulate

from .spec import EPS

op = kernel_here(__file__)


@op.cupy("x * rsqrt(mean(x^2) + eps) * weight as a cupy.ReductionKernel row mean of x^2, then one "
         "cupy.ElementwiseKernel (float16 computed in float): two launches, no row-sized temporary.")
def make_fused(cupy, special=None):
    def run(inp, out):
        x = inp["x"]
        mean_square, scale = rmsnorm_kernels(cupy, compute_type(x.dtype))
        scale(x, mean_square(x, axis=1, keepdims=True), inp["weight"], EPS, out["out"])
    return run


@op.cupy("x / sqrt(mean(x^2) + eps) * weight with a cupy reduction (float16 in float32), eager.",
         name="cupy-unfused")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        ms = (x * x).mean(axis=1, keepdims=True)
        ms += EPS
        xp.sqrt(ms, out=ms)
        y = x / ms
        xp.multiply(y, inp["weight"], out=out["out"])
    return run

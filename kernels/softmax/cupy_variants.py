"""softmax with CuPy on an NVIDIA/AMD GPU: two ReductionKernels (row max, row sum of exp(x - max)) and one
ElementwiseKernel (``cupy``, CuPy's idiomatic best: three passes, no temporary of the row's size), and the chain
of cupy reductions and ufuncs (``cupy-unfused``); the chain's ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.cupy_fused import compute_type, softmax_kernels
from workbench.catalog.xp import accumulate

op = kernel_here(__file__)


@op.cupy("exp(x - max) / sum as cupy.ReductionKernel row max and row sum of exp(x - max), then one "
         "cupy.ElementwiseKernel (float16 computed in float): three launches, no row-sized temporary.")
def make_fused(cupy, special=None):
    def run(inp, out):
        x = inp["x"]
        row_max, exp_sum, scale = softmax_kernels(cupy, compute_type(x.dtype))
        m = row_max(x, axis=1, keepdims=True)
        scale(x, m, exp_sum(x, m, axis=1, keepdims=True), out["out"])
    return run


@op.cupy("exp(x - max) / sum over rows with cupy reductions (float16 computed in float32), eager.",
         name="cupy-unfused")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        e = x - x.max(axis=1, keepdims=True)
        xp.exp(e, out=e)
        xp.divide(e, e.sum(axis=1, keepdims=True), out=out["out"])
    return run

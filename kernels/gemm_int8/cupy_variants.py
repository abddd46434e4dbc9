"""gemm_int8 with CuPy (cuBLAS / hipBLAS) on a GPU, and the same code with numpy (BLAS): the weights
converted to the run dtype, one GEMM, the per-channel scales applied to its output."""
import numpy as np

from workbench.catalog import kernel_here

op = kernel_here(__file__)


@op.cupy("(x @ w.astype(dtype).T) * scale: the codes converted per call, one library GEMM, then the scales.")
def make_run(xp, special=None):
    def run(inp, out):
        x = inp["x"]
        xp.matmul(x, inp["w"].astype(x.dtype).T, out=out["out"])
        out["out"] *= inp["scale"]
    return run


op.numpy(make_run(np), "(x @ w.astype(dtype).T) * scale with numpy's BLAS: the codes converted per call.")

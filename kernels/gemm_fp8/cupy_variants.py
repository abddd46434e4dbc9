"""gemm_fp8 with CuPy (no float8 dtype either) and the same code with numpy (the numpy-table variant):
the bytes decoded through a 256-entry table by fancy indexing, one library GEMM, then the scales."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import DECODE_TABLE

op = kernel_here(__file__)


@op.cupy("table[w] (256 decoded values in the run dtype), x @ that.T with cuBLAS, * scale: a software upcast.")
def make_run(xp, special=None):
    table64 = xp.asarray(DECODE_TABLE)

    def run(inp, out):
        x = inp["x"]
        xp.matmul(x, table64.astype(x.dtype)[inp["w"]].T, out=out["out"])  # every e4m3 value is exact in it
        out["out"] *= inp["scale"]
    return run


op.numpy(make_run(np), "table[w] (256 decoded values in the run dtype), x @ that.T with BLAS, * scale: a "
         "software upcast (numpy has no float8).", name="numpy-table", library=False)

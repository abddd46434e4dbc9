"""gemm_fp8 with numba, which has no float8 type either: each byte decoded through a 256-entry table in
the run dtype inside the dot (a software upcast; the table stays in L1), channels over the cores."""
import functools

import numpy as np

from workbench.authoring.numba_support import disk_cached
from workbench.catalog import kernel_here

from .spec import DECODE_TABLE

op = kernel_here(__file__)


@functools.cache
def _kernel(dtype: str):
    from numba import njit, prange

    zero = np.dtype(dtype).type(0.0)

    @njit(parallel=True, fastmath=True)
    def gemm_fp8(x, w, scale, table, out):
        m, k = x.shape
        for j in prange(w.shape[0]):
            wj, s = w[j], scale[j]
            for r in range(m):
                xr = x[r]
                acc = zero
                for i in range(k):
                    acc += xr[i] * table[wj[i]]
                out[r, j] = acc * s
    return disk_cached(gemm_fp8, salt=dtype)


@op.variant("numba-table", "numba", description="channels over the cores; bytes decoded through a 256-entry "
                                                "table inside the dot, scale after the sum")
def build(ctx):
    kernel, table = _kernel(ctx.dtype), DECODE_TABLE.astype(ctx.dtype)
    warm = op.spec.host_inputs({"m": 1, "n": 1, "k": 1}, ctx.dtype)
    kernel(warm["x"], warm["w"], warm["scale"], table, np.empty((1, 1), ctx.dtype))

    def run(inp, out):
        kernel(inp["x"], inp["w"], inp["scale"], table, out["out"])
    return run

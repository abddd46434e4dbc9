"""argmax on the CPU: numpy's argmax and a row-parallel numba kernel (vectorized max, then find)."""

from functools import cache

import numpy as np

from workbench.catalog import variant


@variant("argmax", "numpy", "numpy", library=True)
def numpy_argmax(ctx):
    """np.argmax over axis 1 into the int64 output."""
    def run(inp, out):
        np.argmax(inp["x"], axis=1, out=out["out"])
    return run


@cache
def _numba_argmax(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import fmax, numpy_dtype

    t = numpy_dtype(dtype)

    @njit(parallel=True, fastmath=True)
    def argmax(x, out):
        rows, cols = x.shape
        for r in prange(rows):
            xr = x[r]
            m = xr[0]
            for j in range(1, cols):  # a maxnum reduction vectorizes; tracking the index would not
                m = fmax(m, xr[j])
            idx = 0
            for j in range(cols):  # second pass stops at the first maximum (row is in cache)
                if xr[j] == m:
                    idx = j
                    break
            out[r] = idx

    argmax(np.empty((0, 0), t), np.empty(0, np.int64))
    return argmax


@variant("argmax", "numba", "numba", dtypes=("float32", "float64"))
def numba_argmax(ctx):
    """Rows over the cores; per row a SIMD max (llvm.maxnum), then a scalar scan for its first index."""
    k = _numba_argmax(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

"""softmax on the CPU: the numpy expression and a row-parallel numba kernel.

The numba kernel makes three passes over each row (max; exp and sum, writing
exp into the output; scale), all inside the row's cache footprint, so memory
sees one read and one write per element as long as a row fits in L2.
"""

from functools import cache

import numpy as np

from workbench.catalog import variant


@variant("softmax", "numpy", "numpy", library=True)
def numpy_softmax(ctx):
    """exp(x - max) / sum: a max pass, a subtract temporary, an exp temporary, a sum, a divide."""
    def run(inp, out):
        x = inp["x"]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.divide(e, e.sum(axis=1, keepdims=True), out=out["out"])
    return run


@cache
def _numba_softmax(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import exp_for, fmax, numpy_dtype

    t = numpy_dtype(dtype)
    exp, zero, one = exp_for(dtype), t(0.0), t(1.0)

    @njit(parallel=True, fastmath=True)
    def softmax(x, out):
        rows, cols = x.shape
        for r in prange(rows):
            xr, o = x[r], out[r]
            m = xr[0]
            for j in range(1, cols):
                m = fmax(m, xr[j])
            s = zero
            for j in range(cols):
                e = exp(xr[j] - m)
                o[j] = e
                s += e
            inv = one / s
            for j in range(cols):
                o[j] *= inv

    e2 = np.empty((0, 0), t)
    softmax(e2, e2)
    return softmax


@variant("softmax", "numba", "numba", dtypes=("float32", "float64"))
def numba_softmax(ctx):
    """Rows over the cores; per row: vectorized max, polynomial exp + sum, scale."""
    k = _numba_softmax(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

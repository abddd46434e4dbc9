"""softmax on the CPU: the numpy expression and a row-parallel numba kernel.

The numba kernel makes three passes over each row (max; exp and sum, writing
exp into the output; scale), all inside the row's cache footprint, so memory
sees one read and one write per element as long as a row fits in L2. During
the exp pass it prefetches the next row, so memory works while the core
computes (~10% at 8192 x 4096).
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

    from workbench.catalog.numba_math import (PREFETCH_BLOCK, exp_for, fmax, line_elements, numpy_dtype,
                                              prefetch_block)

    t = numpy_dtype(dtype)
    exp, zero, one = exp_for(dtype), t(0.0), t(1.0)
    block, line = PREFETCH_BLOCK, line_elements(dtype)

    @njit(parallel=True, fastmath=True)
    def softmax(x, out):
        rows, cols = x.shape
        for r in prange(rows):
            # Derived bounds are computed inside the parallel body: hoisted out of it (nblocks = cols //
            # block before the prange), the exp loop ran 3x slower.
            nblocks = cols // block
            xr, o = x[r], out[r]
            xnext = x[min(r + 1, rows - 1)]
            m = xr[0]
            for j in range(1, cols):
                m = fmax(m, xr[j])
            s = zero
            for b in range(nblocks):  # exp + sum, fetching the next row from memory meanwhile
                j0 = b * block
                prefetch_block(xnext, j0, line)
                for j in range(j0, j0 + block):
                    e = exp(xr[j] - m)
                    o[j] = e
                    s += e
            for j in range(nblocks * block, cols):
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
    """Rows over the cores; per row: SIMD max, polynomial exp + sum (prefetching the next row), scale."""
    k = _numba_softmax(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

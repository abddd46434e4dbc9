"""sum on the CPU: numpy's pairwise sum and a blocked parallel numba reduction."""

from functools import cache

import numpy as np

from workbench.catalog import variant

BLOCK = 8192  # elements summed in the run dtype before the partial goes to float64


@variant("sum", "numpy", "numpy", library=True)
def numpy_sum(ctx):
    """np.sum: pairwise summation, single-threaded."""
    def run(inp, out):
        out["out"][0] = np.sum(inp["x"])
    return run


@cache
def _numba_sum(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import numpy_dtype

    t = numpy_dtype(dtype)
    zero = t(0.0)

    @njit(parallel=True, fastmath=True)
    def blocked_sum(x, out):
        n = x.shape[0]
        nblocks = (n + BLOCK - 1) // BLOCK
        partial = np.empty(nblocks, np.float64)
        for b in prange(nblocks):
            s = zero
            for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
                s += x[i]
            partial[b] = s
        total = 0.0
        for b in range(nblocks):
            total += partial[b]
        out[0] = total

    e1 = np.empty(0, t)
    blocked_sum(e1, np.empty(1, t))
    return blocked_sum


@variant("sum", "numba", "numba", dtypes=("float32", "float64"))
def numba_sum(ctx):
    """Blocks of 8192 over the cores, each summed in SIMD lanes; block sums combined in float64."""
    k = _numba_sum(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

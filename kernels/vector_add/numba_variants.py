"""vector_add on the CPU: numpy's ufunc and a parallel numba loop."""

from functools import cache

import numpy as np

from workbench.catalog import variant


@variant("vector_add", "numpy", "numpy", library=True)
def numpy_add(ctx):
    """np.add into the output buffer (single-threaded ufunc)."""
    def run(inp, out):
        np.add(inp["a"], inp["b"], out=out["out"])
    return run


@cache
def _numba_add(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, numpy_dtype

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def add(a, b, out):
        for i in prange(a.shape[0]):
            out[i] = a[i] + b[i]

    t = numpy_dtype(dtype)
    add(np.empty(0, t), np.empty(0, t), np.empty(0, t))
    return add


@variant("vector_add", "numba", "numba", dtypes=("float32", "float64"))
def numba_add(ctx):
    """Parallel loop over both cores."""
    k = _numba_add(ctx.dtype)

    def run(inp, out):
        k(inp["a"], inp["b"], out["out"])
    return run

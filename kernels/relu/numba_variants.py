"""relu on the CPU: numpy's ufunc and a parallel numba loop."""

from functools import cache

import numpy as np

from workbench.catalog import variant


@variant("relu", "numpy", "numpy", library=True)
def numpy_relu(ctx):
    """np.maximum(x, 0) into the output buffer."""
    def run(inp, out):
        np.maximum(inp["x"], 0, out=out["out"])
    return run


@cache
def _numba_relu(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, numpy_dtype

    zero = numpy_dtype(dtype)(0)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def relu(x, out):
        for i in prange(x.shape[0]):
            out[i] = max(x[i], zero)

    t = numpy_dtype(dtype)
    relu(np.empty(0, t), np.empty(0, t))
    return relu


@variant("relu", "numba", "numba", dtypes=("float32", "float64"))
def numba_relu(ctx):
    """Parallel loop over both cores."""
    k = _numba_relu(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

"""silu on the CPU: the numpy expression and a vectorized numba loop (polynomial exp)."""

from functools import cache

import numpy as np

from workbench.catalog import variant


@variant("silu", "numpy", "numpy", library=True)
def numpy_silu(ctx):
    """x / (1 + exp(-x)): three temporaries. exp overflow for very negative x gives x/inf = -0, as intended."""
    def run(inp, out):
        x = inp["x"]
        with np.errstate(over="ignore"):
            np.divide(x, 1.0 + np.exp(-x), out=out["out"])
    return run


@cache
def _numba_silu(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, exp_for, numpy_dtype

    t = numpy_dtype(dtype)
    exp, one = exp_for(dtype), t(1.0)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def silu(x, out):
        for i in prange(x.shape[0]):
            v = x[i]
            out[i] = v / (one + exp(-v))

    silu(np.empty(0, t), np.empty(0, t))
    return silu


@variant("silu", "numba", "numba", dtypes=("float32", "float64"))
def numba_silu(ctx):
    """One vectorized pass: polynomial exp, one divide."""
    k = _numba_silu(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

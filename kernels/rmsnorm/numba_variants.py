"""rmsnorm on the CPU: the numpy expression and a row-parallel numba kernel."""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.rmsnorm.spec import EPS  # noqa: E402


@variant("rmsnorm", "numpy", "numpy", library=True)
def numpy_rmsnorm(ctx):
    """x / sqrt(mean(x^2) + eps) * weight, as in the LLaMA reference code."""
    def run(inp, out):
        x = inp["x"]
        ms = (x * x).mean(axis=1, keepdims=True)
        np.multiply(x / np.sqrt(ms + EPS), inp["weight"], out=out["out"])
    return run


@cache
def _numba_rmsnorm(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import numpy_dtype

    t = numpy_dtype(dtype)
    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def rmsnorm(x, weight, out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, o = x[r], out[r]
            s = zero
            for j in range(cols):
                s += xr[j] * xr[j]
            rstd = one / np.sqrt(s * inv_n + eps)
            for j in range(cols):
                o[j] = xr[j] * rstd * weight[j]

    e2, e1 = np.empty((0, 0), t), np.empty(0, t)
    rmsnorm(e2, e1, e2)
    return rmsnorm


@variant("rmsnorm", "numba", "numba", dtypes=("float32", "float64"))
def numba_rmsnorm(ctx):
    """Rows over the cores; per row: sum of squares, then scale (the row stays in cache)."""
    k = _numba_rmsnorm(ctx.dtype)

    def run(inp, out):
        k(inp["x"], inp["weight"], out["out"])
    return run

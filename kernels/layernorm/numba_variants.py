"""layernorm on the CPU: the numpy expression and a row-parallel numba kernel (two-pass statistics)."""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.layernorm.spec import EPS  # noqa: E402


@variant("layernorm", "numpy", "numpy", library=True)
def numpy_layernorm(ctx):
    """mean, var, normalise, scale, shift: each a pass over memory with a temporary."""
    def run(inp, out):
        x = inp["x"]
        mean = x.mean(axis=1, keepdims=True)
        d = x - mean
        var = (d * d).mean(axis=1, keepdims=True)
        np.add(d / np.sqrt(var + EPS) * inp["weight"], inp["bias"], out=out["out"])
    return run


@cache
def _numba_layernorm(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import numpy_dtype

    t = numpy_dtype(dtype)
    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def layernorm(x, weight, bias, out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, o = x[r], out[r]
            s = zero
            for j in range(cols):
                s += xr[j]
            mean = s * inv_n
            v = zero
            for j in range(cols):
                d = xr[j] - mean
                v += d * d
            rstd = one / np.sqrt(v * inv_n + eps)
            for j in range(cols):
                o[j] = (xr[j] - mean) * rstd * weight[j] + bias[j]

    e2, e1 = np.empty((0, 0), t), np.empty(0, t)
    layernorm(e2, e1, e1, e2)
    return layernorm


@variant("layernorm", "numba", "numba", dtypes=("float32", "float64"))
def numba_layernorm(ctx):
    """Rows over the cores; per row: mean, centred variance (two passes in cache), normalise."""
    k = _numba_layernorm(ctx.dtype)

    def run(inp, out):
        k(inp["x"], inp["weight"], inp["bias"], out["out"])
    return run

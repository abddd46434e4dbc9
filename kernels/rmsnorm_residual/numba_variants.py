"""rmsnorm_residual on the CPU: unfused numpy, fused and unfused numba."""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.rmsnorm_residual.spec import EPS  # noqa: E402


@variant("rmsnorm_residual", "numpy-unfused", "numpy", library=True)
def numpy_unfused(ctx):
    """residual_out = x + residual, then rmsnorm of it: two separate steps."""
    def run(inp, out):
        h = out["residual_out"]
        np.add(inp["x"], inp["residual"], out=h)
        ms = (h * h).mean(axis=1, keepdims=True)
        np.multiply(h / np.sqrt(ms + EPS), inp["weight"], out=out["out"])
    return run


@cache
def _numba_kernels(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import numpy_dtype

    t = numpy_dtype(dtype)
    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def fused(x, residual, weight, out, residual_out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, rr, h, o = x[r], residual[r], residual_out[r], out[r]
            s = zero
            for j in range(cols):
                v = xr[j] + rr[j]
                h[j] = v
                s += v * v
            rstd = one / np.sqrt(s * inv_n + eps)
            for j in range(cols):
                o[j] = h[j] * rstd * weight[j]

    return fused


def _empties(dtype: str):
    from workbench.catalog.numba_math import numpy_dtype

    return np.empty((0, 0), numpy_dtype(dtype)), np.empty(0, numpy_dtype(dtype))


@variant("rmsnorm_residual", "numba-fused", "numba", mode="fused", dtypes=("float32", "float64"))
def numba_fused(ctx):
    """Per row: add and sum squares in one pass (writing residual_out), then scale from cache."""
    fused = _numba_kernels(ctx.dtype)
    e2, e1 = _empties(ctx.dtype)
    fused(e2, e2, e1, e2, e2)  # compile now, not inside a timed call

    def run(inp, out):
        fused(inp["x"], inp["residual"], inp["weight"], out["out"], out["residual_out"])
    return run


@variant("rmsnorm_residual", "numba-unfused", "numba", dtypes=("float32", "float64"))
def numba_unfused(ctx):
    """Two kernels: the add over the whole array, then rmsnorm reading residual_out back from memory.

    They are the catalog's own vector_add and rmsnorm numba kernels (same compiled functions), so
    "unfused" means exactly those two launches back to back. Imported here, not at load time:
    every catalog folder has loaded by the time a variant is built.
    """
    from workbench_catalog.rmsnorm.cpu import _numba_rmsnorm
    from workbench_catalog.vector_add.cpu import _numba_add

    add, rmsnorm = _numba_add(ctx.dtype), _numba_rmsnorm(ctx.dtype)

    def run(inp, out):
        h = out["residual_out"]
        add(inp["x"].reshape(-1), inp["residual"].reshape(-1), h.reshape(-1))
        rmsnorm(h, inp["weight"], out["out"])
    return run

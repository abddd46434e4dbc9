"""saxpy on the CPU: numpy eager and a parallel numba loop (the STREAM triad of the perf script)."""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.saxpy.spec import ALPHA  # noqa: E402  (sibling module, loaded by path)


@variant("saxpy", "numpy", "numpy", library=True)
def numpy_saxpy(ctx):
    """What a user writes: one expression, one temporary."""
    def run(inp, out):
        np.multiply(inp["x"], ALPHA, out=out["out"])
        out["out"] += inp["y"]
    return run


@cache
def _numba_saxpy(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, numpy_dtype

    alpha = numpy_dtype(dtype)(ALPHA)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def saxpy(x, y, out):
        for i in prange(x.shape[0]):
            out[i] = alpha * x[i] + y[i]

    t = numpy_dtype(dtype)
    saxpy(np.empty(0, t), np.empty(0, t), np.empty(0, t))  # compile now, not inside a timed call
    return saxpy


@variant("saxpy", "numba", "numba", dtypes=("float32", "float64"))
def numba_saxpy(ctx):
    """One fused pass: 2 reads, 1 write per element, split over the cores by prange."""
    k = _numba_saxpy(ctx.dtype)

    def run(inp, out):
        k(inp["x"], inp["y"], out["out"])
    return run

"""bias_gelu on the CPU: unfused numpy, fused and unfused numba.

The unfused numba form materialises ``x + bias`` in a scratch buffer and runs
the elementwise gelu kernel over it: the same arithmetic as the fused kernel,
plus one write and one read of rows*cols elements — the cost fusion removes.
"""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.bias_gelu.spec import COEF, SQRT_2_OVER_PI  # noqa: E402


@variant("bias_gelu", "numpy-unfused", "numpy", library=True)
def numpy_bias_gelu(ctx):
    """h = x + bias, then the gelu expression on h: every step a full pass over memory."""
    # x*x*x, not x**3: numpy's float32 power on negative bases takes a slow path (~55 ms vs 1.3 ms
    # per 1M elements measured here), which would make "numpy" look 20x worse than the expression costs.
    def run(inp, out):
        h = inp["x"] + inp["bias"]
        np.multiply(0.5 * h, 1.0 + np.tanh(SQRT_2_OVER_PI * (h + COEF * (h * h * h))), out=out["out"])
    return run


@cache
def _numba_kernels(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, exp_for, numpy_dtype

    t = numpy_dtype(dtype)
    exp, one, c, k3 = exp_for(dtype), t(1.0), t(-2.0 * SQRT_2_OVER_PI), t(COEF)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def fused(x, bias, out):
        rows, cols = x.shape
        for r in prange(rows):
            for j in range(cols):
                v = x[r, j] + bias[j]
                out[r, j] = v / (one + exp(c * (v + k3 * v * v * v)))

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def add_bias(x, bias, h):
        rows, cols = x.shape
        for r in prange(rows):
            for j in range(cols):
                h[r, j] = x[r, j] + bias[j]

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def gelu(h, out):
        rows, cols = h.shape
        for r in prange(rows):
            for j in range(cols):
                v = h[r, j]
                out[r, j] = v / (one + exp(c * (v + k3 * v * v * v)))

    return fused, add_bias, gelu


@variant("bias_gelu", "numba-fused", "numba", mode="fused", dtypes=("float32", "float64"))
def numba_fused(ctx):
    """One pass: read x, add the bias, gelu, write out."""
    from workbench.catalog.numba_math import numpy_dtype

    fused, _, _ = _numba_kernels(ctx.dtype)
    e2, e1 = np.empty((0, 0), numpy_dtype(ctx.dtype)), np.empty(0, numpy_dtype(ctx.dtype))
    fused(e2, e1, e2)  # compile now, not inside a timed call

    def run(inp, out):
        fused(inp["x"], inp["bias"], out["out"])
    return run


@variant("bias_gelu", "numba-unfused", "numba", dtypes=("float32", "float64"))
def numba_unfused(ctx):
    """Two kernels: h = x + bias into a scratch buffer, then gelu(h) — h goes to memory and back."""
    from workbench.catalog.numba_math import numpy_dtype

    _, add_bias, gelu = _numba_kernels(ctx.dtype)
    e2, e1 = np.empty((0, 0), numpy_dtype(ctx.dtype)), np.empty(0, numpy_dtype(ctx.dtype))
    add_bias(e2, e1, e2)
    gelu(e2, e2)
    h = np.empty((ctx.params["rows"], ctx.params["cols"]), numpy_dtype(ctx.dtype))

    def run(inp, out):
        add_bias(inp["x"], inp["bias"], h)
        gelu(h, out["out"])
    return run

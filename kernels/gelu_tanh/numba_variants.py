"""gelu_tanh on the CPU: the numpy expression a user writes, and a vectorized numba loop.

The numba kernel uses 0.5 (1 + tanh(y)) = 1 / (1 + exp(-2y)), so gelu costs
one exp and one divide; exp is the vectorizable polynomial from
``workbench.catalog.numba_math`` (np.tanh in a numba loop is a libm call per
element and runs ~40x slower).
"""

from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.gelu_tanh.spec import COEF, SQRT_2_OVER_PI  # noqa: E402


@variant("gelu_tanh", "numpy", "numpy", library=True)
def numpy_gelu(ctx):
    """The textbook expression: ~8 temporaries, each a full pass over memory."""
    # x*x*x, not x**3: numpy's float32 power on negative bases takes a slow path (~55 ms vs 1.3 ms
    # per 1M elements measured here), which would make "numpy" look 20x worse than the expression costs.
    def run(inp, out):
        x = inp["x"]
        np.multiply(0.5 * x, 1.0 + np.tanh(SQRT_2_OVER_PI * (x + COEF * (x * x * x))), out=out["out"])
    return run


@cache
def _numba_gelu(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, exp_for, numpy_dtype

    t = numpy_dtype(dtype)
    exp, one, c, k3 = exp_for(dtype), t(1.0), t(-2.0 * SQRT_2_OVER_PI), t(COEF)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def gelu(x, out):
        for i in prange(x.shape[0]):
            v = x[i]
            out[i] = v / (one + exp(c * (v + k3 * v * v * v)))

    gelu(np.empty(0, t), np.empty(0, t))
    return gelu


@variant("gelu_tanh", "numba", "numba", dtypes=("float32", "float64"))
def numba_gelu(ctx):
    """x / (1 + exp(-2 sqrt(2/pi)(x + 0.044715 x^3))) with a polynomial exp: one vectorized pass."""
    k = _numba_gelu(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

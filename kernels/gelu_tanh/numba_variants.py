"""gelu_tanh with numba: a vectorized loop.

The kernel uses 0.5 (1 + tanh(y)) = 1 / (1 + exp(-2y)), so gelu costs one exp
and one divide; exp is the vectorizable polynomial from
``workbench.authoring.numba_math`` (np.tanh in a numba loop is a libm call per
element and runs ~40x slower).
"""
from workbench.catalog import kernel_here

from .spec import COEF, SQRT_2_OVER_PI


@kernel_here(__file__).numba_map(description="x / (1 + exp(-2 sqrt(2/pi)(x + 0.044715 x^3))) with a polynomial exp: "
                                             "one vectorized pass.")
def gelu(t):
    from workbench.authoring.numba_math import exp_for

    exp, one, c, k3 = exp_for(t.__name__), t(1.0), t(-2.0 * SQRT_2_OVER_PI), t(COEF)
    return lambda v: v / (one + exp(c * (v + k3 * v * v * v)))

"""gelu_erf on the CPU: numpy with scipy's erf, and a vectorized numba loop.

numpy has no erf. The "numpy" variant uses ``scipy.special.erf`` (a ufunc)
when scipy is installed; without scipy it falls back to ``math.erf`` applied
element by element through ``np.frompyfunc`` in float64 — correct, and about
100x slower, which the description says.
The numba float32 kernel uses a rational erf (4.5e-7 absolute error, no exp);
float64 calls ``math.erf`` per element (exact, not vectorized).
"""

import importlib.util
import math
from functools import cache

import numpy as np

from workbench.catalog import variant

from workbench_catalog.gelu_erf.spec import INV_SQRT2  # noqa: E402


_HAVE_SCIPY = importlib.util.find_spec("scipy") is not None
_ERF_NAME = "scipy.special.erf" if _HAVE_SCIPY else "math.erf per element (no scipy)"


def _numpy_erf():
    if _HAVE_SCIPY:
        from scipy.special import erf
        return erf
    scalar = np.frompyfunc(math.erf, 1, 1)
    return lambda z: scalar(z.astype(np.float64)).astype(np.float64)


@variant("gelu_erf", "numpy", "numpy", library=True,
         description=f"0.5 x (1 + erf(x / sqrt 2)) in numpy with {_ERF_NAME}")
def numpy_gelu_erf(ctx):
    erf = _numpy_erf()

    def run(inp, out):
        x = inp["x"]
        e = erf(x * INV_SQRT2)
        np.multiply(0.5 * x, 1.0 + e, out=out["out"], casting="same_kind")
    return run


@cache
def _numba_gelu_erf(dtype: str):
    from numba import njit, prange

    from workbench.catalog.numba_math import ELEMENTWISE_FASTMATH, erf_for, numpy_dtype

    t = numpy_dtype(dtype)
    erf, half, one, s = erf_for(dtype), t(0.5), t(1.0), t(INV_SQRT2)

    @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
    def gelu_erf(x, out):
        for i in prange(x.shape[0]):
            v = x[i]
            out[i] = half * v * (one + erf(v * s))

    gelu_erf(np.empty(0, t), np.empty(0, t))
    return gelu_erf


@variant("gelu_erf", "numba", "numba", dtypes=("float32", "float64"))
def numba_gelu_erf(ctx):
    """float32: rational erf, vectorized; float64: libm erf per element (exact, scalar)."""
    k = _numba_gelu_erf(ctx.dtype)

    def run(inp, out):
        k(inp["x"], out["out"])
    return run

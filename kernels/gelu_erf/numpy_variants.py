"""gelu_erf with numpy and scipy's erf.

numpy has no erf. The variant uses ``scipy.special.erf`` (a ufunc) when scipy
is installed; without scipy it falls back to ``math.erf`` applied element by
element through ``np.frompyfunc`` in float64 — correct, and about 100x slower,
which the description says.
"""
import importlib.util
import math

import numpy as np

from workbench.catalog import kernel_here

from .spec import INV_SQRT2

_HAVE_SCIPY = importlib.util.find_spec("scipy") is not None
_ERF_NAME = "scipy.special.erf" if _HAVE_SCIPY else "math.erf per element (no scipy)"
op = kernel_here(__file__)


def _numpy_erf():
    if _HAVE_SCIPY:
        from scipy.special import erf
        return erf
    scalar = np.frompyfunc(math.erf, 1, 1)
    return lambda z: scalar(z.astype(np.float64)).astype(np.float64)


@op.variant("numpy", "numpy", library=True, description=f"0.5 x (1 + erf(x / sqrt 2)) in numpy with {_ERF_NAME}")
def numpy_gelu_erf(ctx):
    erf = _numpy_erf()

    def run(inp, out):
        x = inp["x"]
        e = erf(x * INV_SQRT2)
        np.multiply(0.5 * x, 1.0 + e, out=out["out"], casting="same_kind")
    return run

"""gelu_erf with numba: float32 uses a rational erf (4.5e-7 absolute error, no exp), vectorized;
float64 calls ``math.erf`` per element (exact, not vectorized)."""
from workbench.catalog import kernel_here

from .spec import INV_SQRT2


@kernel_here(__file__).numba_map(description="float32: rational erf, vectorized; float64: libm erf per element "
                                             "(exact, scalar).")
def gelu_erf(t):
    from workbench.authoring.numba_math import erf_for

    erf, half, one, s = erf_for(t.__name__), t(0.5), t(1.0), t(INV_SQRT2)
    return lambda v: half * v * (one + erf(v * s))

"""geglu with numba: float32 uses the rational erf of ``numba_math`` (vectorized); float64 libm erf."""
from workbench.catalog import kernel_here

from .spec import INV_SQRT2


@kernel_here(__file__).numba_map(description="One parallel pass; float32: rational erf, vectorized; float64: libm "
                                             "erf per element.")
def geglu(t):
    from workbench.authoring.numba_math import erf_for

    erf, half, one, s = erf_for(t.__name__), t(0.5), t(1.0), t(INV_SQRT2)
    return lambda g, u: half * g * (one + erf(g * s)) * u

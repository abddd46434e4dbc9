"""swiglu with numba: one vectorized pass over both inputs, the polynomial exp of ``numba_math``."""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba_map(description="One vectorized parallel pass: polynomial exp, one divide, one multiply.")
def swiglu(t):
    from workbench.authoring.numba_math import exp_for

    exp, one = exp_for(t.__name__), t(1.0)
    return lambda g, u: g / (one + exp(-g)) * u

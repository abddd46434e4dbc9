"""silu with numba: a vectorized loop with the polynomial exp of ``numba_math``."""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba_map(description="One vectorized pass: polynomial exp, one divide.")
def silu(t):
    from workbench.authoring.numba_math import exp_for

    exp, one = exp_for(t.__name__), t(1.0)
    return lambda v: v / (one + exp(-v))

"""rmsnorm with numba: a row-parallel kernel (the row stays in cache between its two passes)."""
from workbench.catalog import kernel_here

from .spec import EPS


@kernel_here(__file__).numba()
def rmsnorm_kernel(t):
    """Rows over the cores; per row: sum of squares, then scale (the row stays in cache)."""
    import numpy as np
    from numba import njit, prange

    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def rmsnorm(x, weight, out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, o = x[r], out[r]
            s = zero
            for j in range(cols):
                s += xr[j] * xr[j]
            rstd = one / np.sqrt(s * inv_n + eps)
            for j in range(cols):
                o[j] = xr[j] * rstd * weight[j]
    return rmsnorm

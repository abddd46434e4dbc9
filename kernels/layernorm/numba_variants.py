"""layernorm with numba: a row-parallel kernel (two-pass statistics)."""
from workbench.catalog import kernel_here

from .spec import EPS


@kernel_here(__file__).numba()
def layernorm_kernel(t):
    """Rows over the cores; per row: mean, centred variance (two passes in cache), normalise."""
    import numpy as np
    from numba import njit, prange

    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def layernorm(x, weight, bias, out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, o = x[r], out[r]
            s = zero
            for j in range(cols):
                s += xr[j]
            mean = s * inv_n
            v = zero
            for j in range(cols):
                d = xr[j] - mean
                v += d * d
            rstd = one / np.sqrt(v * inv_n + eps)
            for j in range(cols):
                o[j] = (xr[j] - mean) * rstd * weight[j] + bias[j]

    return layernorm

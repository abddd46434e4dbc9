"""sum with numba: a blocked parallel reduction."""
from workbench.catalog import kernel_here

BLOCK = 8192  # elements summed in the run dtype before the partial goes to float64


@kernel_here(__file__).numba()
def sum_kernel(t):
    """Blocks of 8192 over the cores, each summed in SIMD lanes; block sums combined in float64."""
    import numpy as np
    from numba import njit, prange

    zero = t(0.0)

    @njit(parallel=True, fastmath=True)
    def blocked_sum(x, out):
        n = x.shape[0]
        nblocks = (n + BLOCK - 1) // BLOCK
        partial = np.empty(nblocks, np.float64)
        for b in prange(nblocks):
            s = zero
            for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
                s += x[i]
            partial[b] = s
        total = 0.0
        for b in range(nblocks):
            total += partial[b]
        out[0] = total

    return blocked_sum

"""argmax with numba: a row-parallel kernel (vectorized max, then find)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba()
def argmax_kernel(t):
    """Rows over the cores; per row a SIMD max (llvm.maxnum), then a scalar scan for its first index."""
    from numba import njit, prange

    from workbench.authoring.numba_math import fmax

    @njit(parallel=True, fastmath=True)
    def argmax(x, out):
        rows, cols = x.shape
        for r in prange(rows):
            xr = x[r]
            m = xr[0]
            for j in range(1, cols):  # a maxnum reduction vectorizes; tracking the index would not
                m = fmax(m, xr[j])
            idx = 0
            for j in range(cols):  # second pass stops at the first maximum (row is in cache)
                if xr[j] == m:
                    idx = j
                    break
            out[r] = idx

    return argmax

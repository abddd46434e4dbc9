"""gemm_int8 with numba: output channels over the cores; each int8 weight row is read once for all m rows
of x and converted in the inner (vectorized) loop; the channel's scale is applied to the finished sum."""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba()
def gemm_int8_kernel(t):
    """Channels over the cores (prange over n); int8 row converted in a vectorized dot; scale after the sum."""
    from numba import njit, prange

    zero = t(0.0)

    @njit(parallel=True, fastmath=True)
    def gemm_int8(x, w, scale, out):
        m, k = x.shape
        n = w.shape[0]
        for j in prange(n):
            wj, s = w[j], scale[j]
            for r in range(m):
                xr = x[r]
                acc = zero
                for i in range(k):
                    acc += xr[i] * t(wj[i])
                out[r, j] = acc * s
    return gemm_int8

"""softmax with numba: a row-parallel kernel.

The numba kernel makes three passes over each row (max; exp and sum, writing
exp into the output; scale), all inside the row's cache footprint, so memory
sees one read and one write per element as long as a row fits in L2. During
the exp pass it prefetches the next row, so memory works while the core
computes (~10% at 8192 x 4096).
"""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba()
def softmax_kernel(t):
    """Rows over the cores; per row: SIMD max, polynomial exp + sum (prefetching the next row), scale."""
    from numba import njit, prange

    from workbench.authoring.numba_math import PREFETCH_BLOCK, exp_for, fmax, line_elements, prefetch_block

    exp, zero, one = exp_for(t.__name__), t(0.0), t(1.0)
    block, line = PREFETCH_BLOCK, line_elements(t.__name__)

    @njit(parallel=True, fastmath=True)
    def softmax(x, out):
        rows, cols = x.shape
        for r in prange(rows):
            # Derived bounds are computed inside the parallel body: hoisted out of it (nblocks = cols //
            # block before the prange), the exp loop ran 3x slower.
            nblocks = cols // block
            xr, o = x[r], out[r]
            xnext = x[min(r + 1, rows - 1)]
            m = xr[0]
            for j in range(1, cols):
                m = fmax(m, xr[j])
            s = zero
            for b in range(nblocks):  # exp + sum, fetching the next row from memory meanwhile
                j0 = b * block
                prefetch_block(xnext, j0, line)
                for j in range(j0, j0 + block):
                    e = exp(xr[j] - m)
                    o[j] = e
                    s += e
            for j in range(nblocks * block, cols):
                e = exp(xr[j] - m)
                o[j] = e
                s += e
            inv = one / s
            for j in range(cols):
                o[j] *= inv

    return softmax

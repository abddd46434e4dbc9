"""transpose with numba: naive and cache-tiled kernels (dtype-generic code, compiled once per dtype)."""
from workbench.catalog import kernel_here

TILE = 32  # 32x32 float32 = 4 KiB per tile side: source and destination tiles both stay in L1
op = kernel_here(__file__)


@op.numba("numba-naive")
def naive_kernel(t):
    """Row by row: reads stream, every write lands in a different cache line (and page, for wide rows)."""
    from numba import njit, prange

    @njit(parallel=True)
    def naive(x, out):
        rows, cols = x.shape
        for i in prange(rows):
            for j in range(cols):
                out[j, i] = x[i, j]  # contiguous reads, writes a whole output row apart
    return naive


@op.numba("numba-tiled")
def tiled_kernel(t):
    """32x32 tiles: each tile's source lines and destination lines are reused while in L1."""
    from numba import njit, prange

    @njit(parallel=True)
    def tiled(x, out):
        rows, cols = x.shape
        for bj in prange((cols + TILE - 1) // TILE):
            nbi = (rows + TILE - 1) // TILE  # inside the parallel body: hoisted bounds slowed inner loops
            j0 = bj * TILE
            j1 = min(cols, j0 + TILE)
            for bi in range(nbi):
                i0 = bi * TILE
                i1 = min(rows, i0 + TILE)
                for j in range(j0, j1):
                    for i in range(i0, i1):
                        out[j, i] = x[i, j]
    return tiled

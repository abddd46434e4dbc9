"""transpose on the CPU: numpy's strided copy, naive and cache-tiled numba kernels."""

from functools import cache

import numpy as np

from workbench.catalog import variant

TILE = 32  # 32x32 float32 = 4 KiB per tile side: source and destination tiles both stay in L1


@variant("transpose", "numpy", "numpy", library=True)
def numpy_transpose(ctx):
    """np.copyto(out, x.T): numpy's strided copy loop."""
    def run(inp, out):
        np.copyto(out["out"], inp["x"].T)
    return run


@cache
def _numba_kernels(dtype: str):
    """The naive and tiled kernels; dtype-generic code, cached per dtype so each compiles once."""
    from numba import njit, prange

    @njit(parallel=True)
    def naive(x, out):
        rows, cols = x.shape
        for i in prange(rows):
            for j in range(cols):
                out[j, i] = x[i, j]  # contiguous reads, writes a whole output row apart

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

    return naive, tiled


def _compiled(kernel, dtype: str):
    """Compile ``kernel`` for C-contiguous 2-D arrays of ``dtype`` now (zero-size call), not in a timed one."""
    from workbench.catalog.numba_math import numpy_dtype

    e2 = np.empty((0, 0), numpy_dtype(dtype))
    kernel(e2, e2)
    return kernel


@variant("transpose", "numba-naive", "numba", dtypes=("float32", "float64"))
def numba_naive(ctx):
    """Row by row: reads stream, every write lands in a different cache line (and page, for wide rows)."""
    naive = _compiled(_numba_kernels(ctx.dtype)[0], ctx.dtype)

    def run(inp, out):
        naive(inp["x"], out["out"])
    return run


@variant("transpose", "numba-tiled", "numba", dtypes=("float32", "float64"))
def numba_tiled(ctx):
    """32x32 tiles: each tile's source lines and destination lines are reused while in L1."""
    tiled = _compiled(_numba_kernels(ctx.dtype)[1], ctx.dtype)

    def run(inp, out):
        tiled(inp["x"], out["out"])
    return run

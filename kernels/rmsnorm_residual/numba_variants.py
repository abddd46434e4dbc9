"""rmsnorm_residual with numba: fused and unfused."""
from workbench.catalog import kernel_here

from .spec import EPS

op = kernel_here(__file__)


@op.numba("numba-fused", mode="fused")
def fused_kernel(t):
    """Per row: add and sum squares in one pass (writing residual_out), then scale from cache."""
    import numpy as np
    from numba import njit, prange

    zero, one, eps = t(0.0), t(1.0), t(EPS)

    @njit(parallel=True, fastmath=True)
    def fused(x, residual, weight, out, residual_out):
        rows, cols = x.shape
        for r in prange(rows):
            inv_n = one / t(max(cols, 1))  # in the run dtype: s / cols would be float64
            xr, rr, h, o = x[r], residual[r], residual_out[r], out[r]
            s = zero
            for j in range(cols):
                v = xr[j] + rr[j]
                h[j] = v
                s += v * v
            rstd = one / np.sqrt(s * inv_n + eps)
            for j in range(cols):
                o[j] = h[j] * rstd * weight[j]
    return fused


@op.variant("numba-unfused", "numba")
def numba_unfused(ctx):
    """Two kernels: the add over the whole array, then rmsnorm reading residual_out back from memory.

    They are the catalog's own vector_add and rmsnorm numba kernels (same compiled functions), so
    "unfused" means exactly those two launches back to back. Imported here, not at load time:
    every catalog folder has loaded by the time a variant is built.
    """
    from workbench_catalog.rmsnorm.numba_variants import rmsnorm_kernel
    from workbench_catalog.vector_add.numba_variants import add_kernel

    add, rmsnorm = add_kernel(ctx.dtype), rmsnorm_kernel(ctx.dtype)

    def run(inp, out):
        h = out["residual_out"]
        add(inp["x"].reshape(-1), inp["residual"].reshape(-1), h.reshape(-1))
        rmsnorm(h, inp["weight"], out["out"])
    return run

"""Deliberately bad numba variants of wb_bad: out-of-bounds writes (one past the end, and far) and a hang
that holds the GIL. numba is imported inside the factories, so the folder loads without it."""
from workbench.catalog import kernel_here

op = kernel_here(__file__)


@op.numba("numba-good")
def good(t):
    """The honest add, a serial loop."""
    import numba

    @numba.njit
    def k(a, b, out):
        for i in range(out.shape[0]):
            out[i] = a[i] + b[i]
    return k


@op.numba("numba-one-past")
def one_past(t):
    """Writes one element past the end of `out` (an off-by-one loop bound)."""
    import numba

    @numba.njit
    def k(a, b, out):
        n = out.shape[0]
        for i in range(n):
            out[i] = a[i] + b[i]
        if n > 1:
            out[n] = out[0]
    return k


@op.numba("numba-far")
def far(t):
    """Writes 2**31 elements past the end of `out`: far outside any mapping."""
    import numba

    @numba.njit
    def k(a, b, out):
        n = out.shape[0]
        for i in range(n):
            out[i] = a[i] + b[i]
        if n > 1:
            out[n + (1 << 31)] = out[0]
    return k


@op.numba("numba-hang")
def hang(t):
    """Never returns from nopython code, holding the GIL (no nogil): only killing the process ends it."""
    import numba

    @numba.njit
    def k(a, b, out):
        n = out.shape[0]
        for i in range(n):
            out[i] = a[i] + b[i]
        while n > 1:
            out[0] += t(1.0)
    return k

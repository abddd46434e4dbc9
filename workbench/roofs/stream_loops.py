"""The numba loops the roof probe streams memory with (:func:`workbench.roofs.probe._triad_kernels`).

Module-level functions, imported only where numba is installed: numba's disk cache (``cache=True``) keys a
function by its module and name, and a closure defined inside a function was a new entry in every process (a
roofs ``__pycache__`` held 233 files, 11 MB, and every load read its growing index); here one entry per
signature is written once and loaded after.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, fastmath=True)
def passes(kind, a, b, c, s, reps, lo, hi):  # noqa: ANN001, ANN201 # pragma: no cover - compiled
    """``reps`` passes of kernel ``kind`` (0 triad, 1 in-place update, 2 read) over ``[lo, hi)``; a new scalar
    each pass, so no pass can be skipped."""
    for r in range(reps):
        sr = s + r
        if kind == 0:
            for i in range(lo, hi):
                a[i] = b[i] + sr * c[i]
        elif kind == 1:
            for i in range(lo, hi):
                a[i] = a[i] + sr * c[i]
        else:
            acc = np.float32(0.0)
            for i in range(lo, hi):
                acc += b[i]
            a[lo + r % (hi - lo)] = acc + sr  # kept: the pass cannot be dropped


@numba.njit(cache=True)
def serial(kind, a, b, c, s, reps):  # noqa: ANN001, ANN201 # pragma: no cover - compiled
    """One thread over the whole array."""
    passes(kind, a, b, c, s, reps, 0, a.size)


@numba.njit(parallel=True, cache=True)
def parallel(kind, a, b, c, s, reps, chunks):  # noqa: ANN001, ANN201 # pragma: no cover - compiled
    """One contiguous chunk per thread."""
    n = a.size
    step = n // chunks
    for t in numba.prange(chunks):
        lo = t * step
        passes(kind, a, b, c, s, reps, lo, n if t == chunks - 1 else lo + step)

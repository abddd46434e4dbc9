"""saxpy with numba: a parallel loop (the STREAM triad of the perf script)."""
from workbench.catalog import kernel_here

from .spec import ALPHA


@kernel_here(__file__).numba_map(description="One fused pass: 2 reads, 1 write per element, split over the cores "
                                             "by prange.")
def saxpy(t):
    alpha = t(ALPHA)
    return lambda x, y: alpha * x + y

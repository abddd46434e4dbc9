"""relu with numba: a parallel loop, max against a zero of the run dtype ``t``."""
from workbench.catalog import kernel_here

kernel_here(__file__).numba_map(lambda t: lambda v: max(v, t(0)), description="Parallel loop over both cores.")

"""vector_add with numba: a parallel loop."""
from workbench.catalog import kernel_here

add_kernel = kernel_here(__file__).numba_map(lambda t: lambda a, b: a + b, description="Parallel loop over both cores.")

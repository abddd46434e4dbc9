"""rope with numba: tokens over the cores, each token's cos/sin reused by all of its heads."""
from workbench.authoring.rope_variants import register_numba
from workbench.catalog import kernel_here

register_numba(kernel_here(__file__), "half")

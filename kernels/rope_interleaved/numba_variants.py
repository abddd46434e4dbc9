"""rope_interleaved with numba: tokens over the cores, each token's cos/sin reused by all of its heads."""
from workbench.catalog import kernel_here
from workbench.catalog.rope_variants import register_numba

register_numba(kernel_here(__file__), "interleaved")

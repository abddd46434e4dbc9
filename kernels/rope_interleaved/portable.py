"""rope_interleaved as a portable device kernel: a grid-stride loop over every (token, head, pair) of q and k."""
from workbench.catalog import kernel_here
from workbench.catalog.rope_variants import register_portable

register_portable(kernel_here(__file__), "rope_interleaved")

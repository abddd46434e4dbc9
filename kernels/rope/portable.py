"""rope as a portable device kernel: a grid-stride loop over every (token, head, pair) of q and k."""
from workbench.authoring.rope_variants import register_portable
from workbench.catalog import kernel_here

register_portable(kernel_here(__file__), "rope_half")

"""attention prefill with torch: naive, scaled_dot_product_attention, and SDPA forced to each backend."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import register_torch_variants

register_torch_variants(kernel_here(__file__).name, lambda torch, i: (i["q"], i["k"], i["v"]), causal=True,
                        finish=lambda o: o)

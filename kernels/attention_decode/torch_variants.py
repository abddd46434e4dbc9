"""attention decode with torch: naive, scaled_dot_product_attention, and SDPA forced to each backend."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import register_torch_variants

register_torch_variants(kernel_here(__file__).name, lambda torch, i: (i["q"].unsqueeze(2), i["k"], i["v"]),
                        causal=False, finish=lambda o: o.squeeze(2))

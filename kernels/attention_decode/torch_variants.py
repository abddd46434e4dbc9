"""attention decode with torch: naive, scaled_dot_product_attention, and SDPA forced to each backend."""
from workbench.authoring.attention_variants import register_torch_variants
from workbench.catalog import kernel_here

register_torch_variants(kernel_here(__file__).name, lambda torch, i: (i["q"].unsqueeze(2), i["k"], i["v"]),
                        causal=False, finish=lambda o: o.squeeze(2))

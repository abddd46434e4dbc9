"""relu: out = max(x, 0) — one compare per element; 1 read and 1 write."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.elementwise import activation_spec

SPEC = kernel_here(__file__).register(activation_spec, description="out = max(x, 0); the cheapest activation, "
                                      "bandwidth-bound", formula=lambda x: np.maximum(x, 0.0), flops_per_element=1)

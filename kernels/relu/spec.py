"""relu: out = max(x, 0) — one compare per element; 1 read and 1 write."""

import numpy as np

from workbench.catalog import register_kernel
from workbench.catalog.elementwise import activation_spec

SPEC = register_kernel(activation_spec(
    "relu", "out = max(x, 0); the cheapest activation, bandwidth-bound",
    formula=lambda x: np.maximum(x, 0.0), flops_per_element=1))  # one max per element

"""silu (swish): out = x * sigmoid(x) = x / (1 + exp(-x)) (LLaMA's MLP activation).

FLOPs: exp (one transcendental, negation folded in), +1, divide, *x = 4 per element.
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.elementwise import activation_spec

FLOPS_PER_ELEMENT = 4


SPEC = kernel_here(__file__).register(
    activation_spec, "out = x * sigmoid(x); memory-bound once exp vectorizes",
    formula=lambda x: x / (1.0 + np.exp(-x)), flops_per_element=FLOPS_PER_ELEMENT, input_scale=3.0)

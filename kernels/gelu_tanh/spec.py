"""gelu_tanh: the tanh approximation of GELU (GPT-2, torch ``approximate='tanh'``).

FLOPs count arithmetic operations with each transcendental (tanh) as one:
x*x, *x, *0.044715, +x, *sqrt(2/pi), tanh, +1, *x, *0.5 = 9 per element.
"""

import math

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.elementwise import activation_spec

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
COEF = 0.044715
FLOPS_PER_ELEMENT = 9


def gelu_tanh64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + COEF * x ** 3)))


# Inputs scaled by 2 so both the linear region and the saturated tails of tanh are exercised.
SPEC = kernel_here(__file__).register(
    activation_spec, "out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); memory-bound once tanh vectorizes",
    formula=gelu_tanh64, flops_per_element=FLOPS_PER_ELEMENT, input_scale=2.0)

"""gelu_erf: exact GELU, out = 0.5 x (1 + erf(x / sqrt 2)) (BERT, torch's default ``F.gelu``).

FLOPs: x/sqrt2, erf (one transcendental), +1, *x, *0.5 = 5 per element.
The float64 reference uses ``scipy.special.erf`` when scipy is installed,
otherwise ``math.erf`` element by element (correctly rounded, slower).
"""

import math

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.elementwise import activation_spec

INV_SQRT2 = 1.0 / math.sqrt(2.0)
FLOPS_PER_ELEMENT = 5


def erf64(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
    except ImportError:
        return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)
    return erf(x)


def gelu_erf64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf64(x * INV_SQRT2))


SPEC = kernel_here(__file__).register(
    activation_spec, "out = 0.5 x (1 + erf(x / sqrt 2)); exact GELU, memory-bound once erf vectorizes",
    formula=gelu_erf64, flops_per_element=FLOPS_PER_ELEMENT, input_scale=2.0)

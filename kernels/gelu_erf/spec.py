"""gelu_erf: exact GELU, out = 0.5 x (1 + erf(x / sqrt 2)) (BERT, torch's default ``F.gelu``).

FLOPs: x/sqrt2, erf (one transcendental), +1, *x, *0.5 = 5 per element.
The float64 reference uses ``scipy.special.erf`` when scipy is installed,
otherwise ``math.erf`` element by element (correctly rounded, slower).
"""

import math

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

INV_SQRT2 = 1.0 / math.sqrt(2.0)
FLOPS_PER_ELEMENT = 5


def erf64(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
    except ImportError:
        return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)
    return erf(x)


def make_inputs(p, rng: np.random.Generator):
    return {"x": 2.0 * rng.standard_normal(p["n"])}


def reference(inp, p):
    x = inp["x"]
    return {"out": 0.5 * x * (1.0 + erf64(x * INV_SQRT2))}


SPEC = register_kernel(KernelSpec(
    name="gelu_erf",
    description="out = 0.5 x (1 + erf(x / sqrt 2)); exact GELU, memory-bound once erf vectorizes",
    axes=("n",),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: FLOPS_PER_ELEMENT * p["n"],
    bytes_moved=lambda p, itemsize: 2 * p["n"] * itemsize,
    sizes={
        "verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],
        "quick": [{"n": 2**16}, {"n": 2**18}, {"n": 2**20}],
        "full": [{"n": 2**k} for k in (20, 22, 24, 25)],
    },
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["intermediate"]},
))

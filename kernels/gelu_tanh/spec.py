"""gelu_tanh: the tanh approximation of GELU (GPT-2, torch ``approximate='tanh'``).

FLOPs count arithmetic operations with each transcendental (tanh) as one:
x*x, *x, *0.044715, +x, *sqrt(2/pi), tanh, +1, *x, *0.5 = 9 per element.
"""

import math

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
COEF = 0.044715
FLOPS_PER_ELEMENT = 9


def make_inputs(p, rng: np.random.Generator):
    # Scale 2 so both the linear region and the saturated tails of tanh are exercised.
    return {"x": 2.0 * rng.standard_normal(p["n"])}


def gelu_tanh64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + COEF * x ** 3)))


def reference(inp, p):
    return {"out": gelu_tanh64(inp["x"])}


SPEC = register_kernel(KernelSpec(
    name="gelu_tanh",
    description="out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); memory-bound once tanh vectorizes",
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

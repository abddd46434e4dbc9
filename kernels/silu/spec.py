"""silu (swish): out = x * sigmoid(x) = x / (1 + exp(-x)) (LLaMA's MLP activation).

FLOPs: exp (one transcendental, negation folded in), +1, divide, *x = 4 per element.
"""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

FLOPS_PER_ELEMENT = 4


def make_inputs(p, rng: np.random.Generator):
    return {"x": 3.0 * rng.standard_normal(p["n"])}


def reference(inp, p):
    x = inp["x"]
    return {"out": x / (1.0 + np.exp(-x))}


SPEC = register_kernel(KernelSpec(
    name="silu",
    description="out = x * sigmoid(x); memory-bound once exp vectorizes",
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

"""relu: out = max(x, 0) — one compare per element; 1 read and 1 write."""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel


def make_inputs(p, rng: np.random.Generator):
    return {"x": rng.standard_normal(p["n"])}


def reference(inp, p):
    return {"out": np.maximum(inp["x"], 0.0)}


SPEC = register_kernel(KernelSpec(
    name="relu",
    description="out = max(x, 0); the cheapest activation, bandwidth-bound",
    axes=("n",),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"],  # one max per element
    bytes_moved=lambda p, itemsize: 2 * p["n"] * itemsize,
    sizes={
        "verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],
        "quick": [{"n": 2**16}, {"n": 2**18}, {"n": 2**20}],
        "full": [{"n": 2**k} for k in (20, 22, 24, 25)],
    },
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["intermediate"]},
))

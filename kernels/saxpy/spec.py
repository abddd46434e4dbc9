"""saxpy: y = a * x + y_in — the simplest memory-bound kernel (2 reads, 1 write per element)."""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

ALPHA = 1.7


def make_inputs(p, rng: np.random.Generator):
    n = p["n"]
    return {"x": rng.standard_normal(n), "y": rng.standard_normal(n)}


def reference(inp, p):
    return {"out": ALPHA * inp["x"] + inp["y"]}


SPEC = register_kernel(KernelSpec(
    name="saxpy",
    description="out = alpha * x + y (alpha = 1.7); STREAM-triad-like, purely bandwidth-bound",
    axes=("n",),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: 2 * p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
    sizes={
        "verify": [{"n": 1}, {"n": 1000003}, {"n": 4099}],
        "quick": [{"n": 2**16}, {"n": 2**20}, {"n": 2**22}],
        "full": [{"n": 2**k} for k in range(12, 27, 2)],
    },
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["hidden"]},
))

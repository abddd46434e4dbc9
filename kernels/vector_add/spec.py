"""vector_add: out = a + b — the residual add; 2 reads and 1 write per element, no arithmetic to hide behind."""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

def make_inputs(p, rng: np.random.Generator):
    n = p["n"]
    return {"a": rng.standard_normal(n), "b": rng.standard_normal(n)}


def reference(inp, p):
    return {"out": inp["a"] + inp["b"]}


SPEC = register_kernel(KernelSpec(
    name="vector_add",
    description="out = a + b; the residual add of a transformer block, purely bandwidth-bound",
    axes=("n",),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
    sizes={
        "verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],
        "quick": [{"n": 2**16}, {"n": 2**18}, {"n": 2**20}],
        "full": [{"n": 2**k} for k in (20, 22, 24, 25)],
    },
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["hidden"]},
))

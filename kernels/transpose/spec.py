"""transpose: out[c, r] = x[r, c] into a new contiguous array — pure data movement.

No arithmetic (0 FLOPs); one read and one write per element. The naive form
strides through one side; the tiled form moves cache-/shared-memory-sized
blocks so both sides are touched in contiguous runs.
"""

import numpy as np

from workbench.catalog import kernel_here


def make_inputs(p, rng: np.random.Generator):
    return {"x": rng.standard_normal((p["rows"], p["cols"]))}


def reference(inp, p):
    return {"out": np.ascontiguousarray(inp["x"].T)}


SPEC = kernel_here(__file__).register(
    description="out = x.T materialised (contiguous); naive vs tiled memory access",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["cols"], p["rows"])},
    flops=lambda p: 0,
    bytes_moved=lambda p, itemsize: 2 * p["rows"] * p["cols"] * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097},
                   {"rows": 257, "cols": 129}],
        "quick": [{"rows": 512, "cols": 512}, {"rows": 1024, "cols": 1024}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 4096, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["hidden"]},
)

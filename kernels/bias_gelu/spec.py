"""bias_gelu: out = gelu_tanh(x + bias) — the MLP up-projection epilogue, the fusion tutorial's example.

Fused, it reads x once and writes out once; unfused, the sum ``x + bias`` is
materialised and read back (two extra passes over rows*cols). FLOPs: the add
plus gelu_tanh's 9 per element.
"""

import math

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
COEF = 0.044715


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    return {"x": 2.0 * rng.standard_normal((r, c)), "bias": 0.5 * rng.standard_normal(c)}


def reference(inp, p):
    h = inp["x"] + inp["bias"]
    return {"out": 0.5 * h * (1.0 + np.tanh(SQRT_2_OVER_PI * (h + COEF * h ** 3)))}


SPEC = register_kernel(KernelSpec(
    name="bias_gelu",
    description="out = gelu_tanh(x + bias[cols]); fused vs unfused shows what a materialised intermediate costs",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"], p["cols"])},
    flops=lambda p: 10 * p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: (2 * p["rows"] * p["cols"] + p["cols"]) * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
        "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["intermediate"]},
))

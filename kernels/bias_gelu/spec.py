"""bias_gelu: out = gelu_tanh(x + bias) — the MLP up-projection epilogue, the fusion tutorial's example.

Fused, it reads x once and writes out once; unfused, the sum ``x + bias`` is
materialised and read back (two extra passes over rows*cols). FLOPs: the add
plus gelu_tanh's 9 per element.
"""

import math

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
COEF = 0.044715


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    return {"x": 2.0 * rng.standard_normal((r, c)), "bias": 0.5 * rng.standard_normal(c)}


def reference(inp, p):
    h = inp["x"] + inp["bias"]
    return {"out": 0.5 * h * (1.0 + np.tanh(SQRT_2_OVER_PI * (h + COEF * h ** 3)))}


SPEC = kernel_here(__file__).register(
    rowwise_spec, "out = gelu_tanh(x + bias[cols]); fused vs unfused shows what a materialised intermediate costs",
    make_inputs=make_inputs, reference=reference, flops_per_element=10,
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["intermediate"]})

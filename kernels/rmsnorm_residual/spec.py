"""rmsnorm_residual: residual_out = x + residual; out = rmsnorm(residual_out) * weight (eps 1e-6).

The pre-norm block's "add & norm". Fused, each row is read once (x and
residual) and both outputs are written once: 4 rows*cols transfers plus the
weight. Unfused, residual_out is written and read back. FLOPs per element:
the add plus rmsnorm's 4 = 5.
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

EPS = 1e-6


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    return {"x": rng.standard_normal((r, c)),
            "residual": 2.0 * rng.standard_normal((r, c)) + 0.5,
            "weight": 1.0 + 0.2 * rng.standard_normal(c)}


def reference(inp, p):
    h = inp["x"] + inp["residual"]
    return {"out": h / np.sqrt((h * h).mean(axis=1, keepdims=True) + EPS) * inp["weight"],
            "residual_out": h}


SPEC = kernel_here(__file__).register(
    rowwise_spec, "residual add then RMS normalisation; fused vs unfused",
    make_inputs=make_inputs, reference=reference, flops_per_element=5, outputs=("out", "residual_out"))

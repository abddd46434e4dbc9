"""rmsnorm_residual: residual_out = x + residual; out = rmsnorm(residual_out) * weight (eps 1e-6).

The pre-norm block's "add & norm". Fused, each row is read once (x and
residual) and both outputs are written once: 4 rows*cols transfers plus the
weight. Unfused, residual_out is written and read back. FLOPs per element:
the add plus rmsnorm's 4 = 5.
"""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

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


SPEC = register_kernel(KernelSpec(
    name="rmsnorm_residual",
    description="residual add then RMS normalisation; fused vs unfused",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"], p["cols"]), "residual_out": (p["rows"], p["cols"])},
    flops=lambda p: 5 * p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: (4 * p["rows"] * p["cols"] + p["cols"]) * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
        "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["hidden"]},
))

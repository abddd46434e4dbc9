"""rmsnorm over each row: out = x / sqrt(mean(x^2) + eps) * weight, eps = 1e-6 (LLaMA).

FLOPs per element: square and add, scale by rstd, *weight = 4.
"""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

EPS = 1e-6


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    return {"x": 2.0 * rng.standard_normal((r, c)) + 0.5,
            "weight": 1.0 + 0.2 * rng.standard_normal(c)}


def rmsnorm64(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * weight


def reference(inp, p):
    return {"out": rmsnorm64(inp["x"], inp["weight"])}


SPEC = register_kernel(KernelSpec(
    name="rmsnorm",
    description="row-wise RMS normalisation with weight (eps 1e-6)",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"], p["cols"])},
    flops=lambda p: 4 * p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: (2 * p["rows"] * p["cols"] + p["cols"]) * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
        "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["hidden"]},
))

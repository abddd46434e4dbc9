"""layernorm over each row: out = (x - mean) / sqrt(var + eps) * weight + bias, eps = 1e-5.

The variance is the population variance (divide by cols), as in torch.
FLOPs per element: mean add, subtract, square and add for the variance,
scale by rstd, *weight, +bias = 7 (the per-row sqrt/divide is negligible).
"""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel

EPS = 1e-5


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    # A non-zero mean, so a kernel that forgets to subtract it fails.
    return {"x": 2.0 * rng.standard_normal((r, c)) + 0.5,
            "weight": 1.0 + 0.2 * rng.standard_normal(c),
            "bias": 0.2 * rng.standard_normal(c)}


def reference(inp, p):
    x = inp["x"]
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return {"out": (x - mean) / np.sqrt(var + EPS) * inp["weight"] + inp["bias"]}


SPEC = register_kernel(KernelSpec(
    name="layernorm",
    description="row-wise layer normalisation with weight and bias (eps 1e-5)",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"], p["cols"])},
    flops=lambda p: 7 * p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: (2 * p["rows"] * p["cols"] + 2 * p["cols"]) * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
        "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["hidden"]},
))

"""layernorm over each row: out = (x - mean) / sqrt(var + eps) * weight + bias, eps = 1e-5.

The variance is the population variance (divide by cols), as in torch.
FLOPs per element: mean add, subtract, square and add for the variance,
scale by rstd, *weight, +bias = 7 (the per-row sqrt/divide is negligible).
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

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


SPEC = kernel_here(__file__).register(
    rowwise_spec, "row-wise layer normalisation with weight and bias (eps 1e-5)",
    make_inputs=make_inputs, reference=reference, flops_per_element=7)

"""layernorm over each row: out = (x - mean) / sqrt(var + eps) * weight + bias, eps = 1e-5.

The variance is the population variance (divide by cols), as in torch.
FLOPs per element: mean add, subtract, square and add for the variance,
scale by rstd, *weight, +bias = 7 (the per-row sqrt/divide is negligible).
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

EPS = 1e-5


#: Every 4th row (1, 5, 9, ...) is scaled by this, so its variance (4 * SMALL_ROW_SCALE**2 = 4e-4) is only 40x
#: eps: a kernel with eps 1e-4 instead of 1e-5 is off by ~10% there, and one without eps by ~1%. With every
#: row's variance ~4, eps moves the output by ~1e-6 and a wrong eps passes (kernels/README.md, "Inputs that
#: exercise the constants").
SMALL_ROW_SCALE = 1e-2


def make_inputs(p, rng: np.random.Generator):
    r, c = p["rows"], p["cols"]
    # A non-zero mean, so a kernel that forgets to subtract it fails.
    x = 2.0 * rng.standard_normal((r, c)) + 0.5
    x[1::4] *= SMALL_ROW_SCALE
    return {"x": x,
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

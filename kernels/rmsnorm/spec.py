"""rmsnorm over each row: out = x / sqrt(mean(x^2) + eps) * weight, eps = 1e-6 (LLaMA).

FLOPs per element: square and add, scale by rstd, *weight = 4.
"""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

EPS = 1e-6


SPEC = kernel_here(__file__).register(
    rowwise_spec, "row-wise RMS normalisation with weight (eps 1e-6)", flops_per_element=4,
    make_inputs=lambda p, rng: {"x": 2.0 * rng.standard_normal((p["rows"], p["cols"])) + 0.5,
                                "weight": 1.0 + 0.2 * rng.standard_normal(p["cols"])},
    reference=lambda i, p: {"out": i["x"] / np.sqrt((i["x"] * i["x"]).mean(axis=1, keepdims=True) + EPS) * i["weight"]})

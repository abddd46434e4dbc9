"""l2norm over each row: out = x / sqrt(sum(x^2) + eps) (QK-norm); FLOPs/element: square, add, scale."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec

EPS = 1e-12

SPEC = kernel_here(__file__).register(
    rowwise_spec, "row-wise L2 normalisation (eps 1e-12)", flops_per_element=3,
    make_inputs=lambda p, rng: {"x": rng.standard_normal((p["rows"], p["cols"])) + 0.25},
    reference=lambda i, p: {"out": i["x"] / np.sqrt((i["x"] * i["x"]).sum(axis=1, keepdims=True) + EPS)})

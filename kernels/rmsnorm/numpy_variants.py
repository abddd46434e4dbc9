"""rmsnorm with numpy: the expression of the LLaMA reference code."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import EPS

kernel_here(__file__).numpy(
    lambda i, o: np.multiply(i["x"] / np.sqrt((i["x"] * i["x"]).mean(axis=1, keepdims=True) + EPS), i["weight"],
                             out=o["out"]), "x / sqrt(mean(x^2) + eps) * weight, as in the LLaMA reference code.")

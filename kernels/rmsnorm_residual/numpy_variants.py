"""rmsnorm_residual with numpy: the add, then rmsnorm of it (two separate steps)."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import EPS


def unfused(inp, out):
    h = out["residual_out"]
    np.add(inp["x"], inp["residual"], out=h)
    ms = (h * h).mean(axis=1, keepdims=True)
    np.multiply(h / np.sqrt(ms + EPS), inp["weight"], out=out["out"])


kernel_here(__file__).numpy(unfused, "residual_out = x + residual, then rmsnorm of it: two separate steps.",
                            name="numpy-unfused")

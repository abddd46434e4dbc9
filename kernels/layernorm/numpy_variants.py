"""layernorm with numpy: the expression a user writes."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import EPS


def layernorm(inp, out):
    x = inp["x"]
    mean = x.mean(axis=1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, keepdims=True)
    np.add(d / np.sqrt(var + EPS) * inp["weight"], inp["bias"], out=out["out"])


kernel_here(__file__).numpy(layernorm, "mean, var, normalise, scale, shift: each a pass over memory with a temporary.")

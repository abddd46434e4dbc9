"""silu with numpy: the expression a user writes."""
import numpy as np

from workbench.catalog import kernel_here


def silu(inp, out):
    x = inp["x"]
    with np.errstate(over="ignore"):
        np.divide(x, 1.0 + np.exp(-x), out=out["out"])


kernel_here(__file__).numpy(silu, "x / (1 + exp(-x)): three temporaries. exp overflow for very negative x gives "
                                  "x/inf = -0, as intended.")

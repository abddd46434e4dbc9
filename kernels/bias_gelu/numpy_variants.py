"""bias_gelu with numpy: unfused, every step a full pass over memory."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import COEF, SQRT_2_OVER_PI


# x*x*x, not x**3: numpy's float32 power on negative bases takes a slow path (~55 ms vs 1.3 ms
# per 1M elements measured here), which would make "numpy" look 20x worse than the expression costs.
def bias_gelu(inp, out):
    h = inp["x"] + inp["bias"]
    np.multiply(0.5 * h, 1.0 + np.tanh(SQRT_2_OVER_PI * (h + COEF * (h * h * h))), out=out["out"])


kernel_here(__file__).numpy(bias_gelu, "h = x + bias, then the gelu expression on h: every step a full pass over "
                                       "memory.", name="numpy-unfused")

"""geglu with CuPy (cupyx.scipy.special.erf) on an NVIDIA/AMD GPU, and the same code with numpy + scipy's
erf (the numpy variant; registered only where scipy is installed, numpy has no erf)."""
import importlib.util

import numpy as np

from workbench.catalog import kernel_here

from .spec import INV_SQRT2

op = kernel_here(__file__)


@op.cupy("erf(gate/sqrt 2), +1, *gate, *0.5, *up on one temporary: eager, five launches.", special=True)
def make_run(xp, special):
    """``special`` provides ``erf``: cupyx.scipy.special on a GPU, scipy.special with numpy."""
    def run(inp, out):
        g = inp["gate"]
        t = special.erf(g * INV_SQRT2)  # float16 may come back as float32; the final out= casts
        t += 1.0
        t *= g
        t *= 0.5
        xp.multiply(t, inp["up"], out=out["out"], casting="same_kind")
    return run


if importlib.util.find_spec("scipy") is not None:
    @op.variant("numpy", "numpy", library=True,
                description="0.5 gate (1 + erf(gate / sqrt 2)) * up with scipy.special.erf.")
    def numpy_geglu(ctx):
        """scipy.special is imported when the variant is built: loading the catalog must not pay its ~1 s."""
        import scipy.special

        return make_run(np, scipy.special)

"""saxpy on the CPU: numpy eager and a parallel numba loop."""

import numpy as np

from workbench.catalog import variant

from workbench_catalog.saxpy.spec import ALPHA  # noqa: E402  (sibling module, loaded by path)


@variant("saxpy", "numpy", "numpy", library=True)
def numpy_saxpy(ctx):
    """What a user writes: one expression, one temporary."""
    def run(inp, out):
        np.multiply(inp["x"], ALPHA, out=out["out"])
        out["out"] += inp["y"]
    return run

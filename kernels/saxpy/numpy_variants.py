"""saxpy with numpy: what a user writes."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import ALPHA


def saxpy(inp, out):
    np.multiply(inp["x"], ALPHA, out=out["out"])
    out["out"] += inp["y"]


kernel_here(__file__).numpy(saxpy, "What a user writes: one expression, one temporary.")

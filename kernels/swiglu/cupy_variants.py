"""swiglu with CuPy on an NVIDIA/AMD GPU, and the same code with numpy (the numpy variant)."""
import numpy as np

from workbench.catalog import kernel_here

op = kernel_here(__file__)


@op.cupy("gate / (1 + exp(-gate)) * up: negate, exp, add, divide, multiply on one temporary; eager.")
def make_run(xp, special=None):
    def run(inp, out):
        g = inp["gate"]
        t = xp.negative(g)
        xp.exp(t, out=t)
        t += 1.0
        xp.divide(g, t, out=t)
        xp.multiply(t, inp["up"], out=out["out"])
    return run


op.numpy(make_run(np), "gate / (1 + exp(-gate)) * up with numpy ufuncs on one temporary.")

"""silu with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("x / (1 + exp(-x)): negate, exp, add, divide, eager on one temporary.")
def make_run(xp, special=None):
    def run(inp, out):
        x = inp["x"]
        t = xp.negative(x)
        xp.exp(t, out=t)
        t += 1.0
        xp.divide(x, t, out=out["out"])
    return run

"""saxpy with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here

from .spec import ALPHA


@kernel_here(__file__).cupy("cupy.multiply(x, 1.7, out=out); cupy.add(out, y, out=out): two elementwise launches, "
                            "no temporary.")
def make_run(xp, special=None):
    def run(inp, out):
        o = out["out"]
        xp.multiply(inp["x"], ALPHA, out=o)
        xp.add(o, inp["y"], out=o)
    return run

"""layernorm with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.xp import accumulate

from .spec import EPS


@kernel_here(__file__).cupy("Two-pass mean/variance with cupy reductions (float16 in float32), then normalise, "
                            "scale, shift.")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        d = x - x.mean(axis=1, keepdims=True)
        var = (d * d).mean(axis=1, keepdims=True)
        var += EPS
        xp.sqrt(var, out=var)
        d /= var
        d *= inp["weight"]
        xp.add(d, inp["bias"], out=out["out"])
    return run

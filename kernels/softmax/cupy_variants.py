"""softmax with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.xp import accumulate


@kernel_here(__file__).cupy("exp(x - max) / sum over rows with cupy reductions (float16 computed in float32), eager.")
def make_run(xp, special=None):
    def run(inp, out):
        x = accumulate(xp, inp["x"])
        e = x - x.max(axis=1, keepdims=True)
        xp.exp(e, out=e)
        xp.divide(e, e.sum(axis=1, keepdims=True), out=out["out"])
    return run

"""argmax with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("cupy.argmax(x, axis=1) copied into the int64 output.")
def make_run(xp, special=None):
    def run(inp, out):
        out["out"][...] = xp.argmax(inp["x"], axis=1)
    return run

"""sum with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("cupy.sum(x) (float16 accumulated in float32), stored into out[0] on the device.")
def make_run(xp, special=None):
    def run(inp, out):
        x = inp["x"]
        s = xp.sum(x, dtype=xp.float32) if x.dtype == xp.float16 else xp.sum(x)
        out["out"][...] = s  # device-side copy of the 0-d result, cast to the run dtype
    return run

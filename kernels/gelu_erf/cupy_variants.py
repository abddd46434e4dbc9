"""gelu_erf with CuPy on an NVIDIA/AMD GPU; ``make_run`` runs with numpy + scipy.special too (tests)."""
from workbench.catalog import kernel_here

from .spec import INV_SQRT2


@kernel_here(__file__).cupy("cupyx.scipy.special.erf(x/sqrt 2), then +1, *x, *0.5 into out: eager, four launches.",
                            special=True)
def make_run(xp, special):
    """``special`` provides ``erf``: cupyx.scipy.special on a GPU, scipy.special with numpy."""
    erf = special.erf

    def run(inp, out):
        x = inp["x"]
        t = erf(x * INV_SQRT2)  # float16 may come back as float32; the final out= casts
        t += 1.0
        t *= x
        xp.multiply(t, 0.5, out=out["out"])
    return run

"""gelu_erf with CuPy library calls on an NVIDIA/AMD GPU: 0.5*x*(1+erf(x/sqrt 2)) with cupyx.scipy.special.erf.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.gelu_erf.spec import INV_SQRT2  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


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


@variant("gelu_erf", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_gelu_erf(ctx):
    """cupyx.scipy.special.erf(x/sqrt 2), then +1, *x, *0.5 into out: eager, four launches."""
    import cupy
    import cupyx.scipy.special

    return make_run(cupy, cupyx.scipy.special)

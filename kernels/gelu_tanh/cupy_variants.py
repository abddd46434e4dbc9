"""gelu_tanh with CuPy library calls on an NVIDIA/AMD GPU: the tanh formula as a chain of eager ufuncs.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.gelu_tanh.spec import COEF, SQRT_2_OVER_PI  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        x, o = inp["x"], out["out"]
        t = x * x
        t *= COEF
        t += 1.0
        t *= x
        t *= SQRT_2_OVER_PI
        xp.tanh(t, out=t)
        t += 1.0
        t *= x
        xp.multiply(t, 0.5, out=o)
    return run


@variant("gelu_tanh", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_gelu_tanh(ctx):
    """0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715x^3))) as eager cupy ufuncs on one temporary (9 launches)."""
    import cupy

    return make_run(cupy)

"""silu with CuPy library calls on an NVIDIA/AMD GPU: x / (1 + exp(-x)) as cupy ufuncs.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        x = inp["x"]
        t = xp.negative(x)
        xp.exp(t, out=t)
        t += 1.0
        xp.divide(x, t, out=out["out"])
    return run


@variant("silu", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_silu(ctx):
    """x / (1 + exp(-x)): negate, exp, add, divide, eager on one temporary."""
    import cupy

    return make_run(cupy)

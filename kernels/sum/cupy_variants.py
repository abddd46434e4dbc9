"""sum with CuPy library calls on an NVIDIA/AMD GPU: cupy.sum (a CUB device reduction).

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
        s = xp.sum(x, dtype=xp.float32) if x.dtype == xp.float16 else xp.sum(x)
        out["out"][...] = s  # device-side copy of the 0-d result, cast to the run dtype
    return run


@variant("sum", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_sum(ctx):
    """cupy.sum(x) (float16 accumulated in float32), stored into out[0] on the device."""
    import cupy

    return make_run(cupy)

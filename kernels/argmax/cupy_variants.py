"""argmax with CuPy library calls on an NVIDIA/AMD GPU: cupy.argmax over each row (int64 indices).

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        out["out"][...] = xp.argmax(inp["x"], axis=1)
    return run


@variant("argmax", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_argmax(ctx):
    """cupy.argmax(x, axis=1) copied into the int64 output."""
    import cupy

    return make_run(cupy)

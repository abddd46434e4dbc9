"""relu with CuPy library calls on an NVIDIA/AMD GPU: cupy.maximum(x, 0, out=out).

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        xp.maximum(inp["x"], 0, out=out["out"])
    return run


@variant("relu", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_relu(ctx):
    """cupy.maximum(x, 0, out=out): one elementwise launch."""
    import cupy

    return make_run(cupy)

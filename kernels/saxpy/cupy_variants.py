"""saxpy with CuPy library calls on an NVIDIA/AMD GPU: out = 1.7*x + y as two in-place ufunc calls into the output.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.saxpy.spec import ALPHA  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        o = out["out"]
        xp.multiply(inp["x"], ALPHA, out=o)
        xp.add(o, inp["y"], out=o)
    return run


@variant("saxpy", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_saxpy(ctx):
    """cupy.multiply(x, 1.7, out=out); cupy.add(out, y, out=out): two elementwise launches, no temporary."""
    import cupy

    return make_run(cupy)

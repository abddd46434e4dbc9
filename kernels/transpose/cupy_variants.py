"""transpose with CuPy library calls on an NVIDIA/AMD GPU: a strided copy of x.T into the output.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        xp.copyto(out["out"], inp["x"].T)  # one strided copy kernel; no ascontiguousarray temporary
    return run


@variant("transpose", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_transpose(ctx):
    """cupy.copyto(out, x.T): cupy's elementwise copy with transposed strides (not a tiled kernel)."""
    import cupy

    return make_run(cupy)

"""rmsnorm_residual with CuPy library calls on an NVIDIA/AMD GPU: add into residual_out, then rmsnorm reading it back.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    # Unfused: the add, then the catalog's own rmsnorm cupy code on residual_out (rmsnorm's folder
    # loads before this one; imported on use all the same).
    from workbench_catalog.rmsnorm.cupy_variants import make_run as rmsnorm_run

    rmsnorm = rmsnorm_run(xp)

    def run(inp, out):
        h = xp.add(inp["x"], inp["residual"], out=out["residual_out"])
        rmsnorm({"x": h, "weight": inp["weight"]}, out)
    return run


@variant("rmsnorm_residual", "cupy-unfused", "cupy", library=True, dtypes=DTYPES)
def cupy_unfused(ctx):
    """cupy.add(x, residual, out=residual_out), then rmsnorm of it (float16 reduced in float32): unfused."""
    import cupy

    return make_run(cupy)

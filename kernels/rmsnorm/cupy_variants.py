"""rmsnorm with CuPy library calls on an NVIDIA/AMD GPU: mean of squares, rsqrt and scale as cupy reductions and ufuncs.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.rmsnorm.spec import EPS  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def _acc(xp, x):
    """float16 rows are reduced in float32 (as cuBLAS/CUB-based libraries do); other dtypes in their own."""
    return x.astype(xp.float32) if x.dtype == xp.float16 else x


def make_run(xp, special=None):
    def run(inp, out):
        x = _acc(xp, inp["x"])
        ms = (x * x).mean(axis=1, keepdims=True)
        ms += EPS
        xp.sqrt(ms, out=ms)
        y = x / ms
        xp.multiply(y, inp["weight"], out=out["out"])
    return run


@variant("rmsnorm", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_rmsnorm(ctx):
    """x / sqrt(mean(x^2) + eps) * weight with a cupy reduction (float16 in float32), eager."""
    import cupy

    return make_run(cupy)

"""layernorm with CuPy library calls on an NVIDIA/AMD GPU: two-pass statistics, normalise, scale, shift.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.layernorm.spec import EPS  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def _acc(xp, x):
    """float16 rows are reduced in float32 (as cuBLAS/CUB-based libraries do); other dtypes in their own."""
    return x.astype(xp.float32) if x.dtype == xp.float16 else x


def make_run(xp, special=None):
    def run(inp, out):
        x = _acc(xp, inp["x"])
        d = x - x.mean(axis=1, keepdims=True)
        var = (d * d).mean(axis=1, keepdims=True)
        var += EPS
        xp.sqrt(var, out=var)
        d /= var
        d *= inp["weight"]
        xp.add(d, inp["bias"], out=out["out"])
    return run


@variant("layernorm", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_layernorm(ctx):
    """Two-pass mean/variance with cupy reductions (float16 in float32), then normalise, scale, shift."""
    import cupy

    return make_run(cupy)

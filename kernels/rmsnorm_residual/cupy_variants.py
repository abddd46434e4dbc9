"""rmsnorm_residual with CuPy library calls on an NVIDIA/AMD GPU: add into residual_out, then rmsnorm reading it back.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.rmsnorm_residual.spec import EPS  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def _acc(xp, x):
    """float16 rows are reduced in float32 (as cuBLAS/CUB-based libraries do); other dtypes in their own."""
    return x.astype(xp.float32) if x.dtype == xp.float16 else x


def make_run(xp, special=None):
    def run(inp, out):
        h = xp.add(inp["x"], inp["residual"], out=out["residual_out"])
        hf = _acc(xp, h)
        ms = (hf * hf).mean(axis=1, keepdims=True)
        ms += EPS
        xp.sqrt(ms, out=ms)
        y = hf / ms
        xp.multiply(y, inp["weight"], out=out["out"])
    return run


@variant("rmsnorm_residual", "cupy-unfused", "cupy", library=True, dtypes=DTYPES)
def cupy_unfused(ctx):
    """cupy.add(x, residual, out=residual_out), then rmsnorm of it (float16 reduced in float32): unfused."""
    import cupy

    return make_run(cupy)

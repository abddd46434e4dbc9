"""bias_gelu with CuPy library calls on an NVIDIA/AMD GPU: x + bias materialised, then gelu_tanh as ufuncs.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

from workbench_catalog.bias_gelu.spec import COEF, SQRT_2_OVER_PI  # noqa: E402

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        o = out["out"]
        h = xp.add(inp["x"], inp["bias"])  # materialised in the run dtype: the unfused intermediate
        t = h * h
        t *= COEF
        t += 1.0
        t *= h
        t *= SQRT_2_OVER_PI
        xp.tanh(t, out=t)
        t += 1.0
        t *= h
        xp.multiply(t, 0.5, out=o)
    return run


@variant("bias_gelu", "cupy-unfused", "cupy", library=True, dtypes=DTYPES)
def cupy_unfused(ctx):
    """h = cupy.add(x, bias), then gelu_tanh(h) as eager ufuncs: h and a temporary go through memory."""
    import cupy

    return make_run(cupy)

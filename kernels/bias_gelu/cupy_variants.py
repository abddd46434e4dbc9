"""bias_gelu with CuPy library calls on an NVIDIA/AMD GPU: x + bias materialised, then gelu_tanh as ufuncs.

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    # The unfused form is literally the bias add followed by the catalog's own gelu_tanh cupy code
    # (imported on use: gelu_tanh's folder loads after this one).
    from workbench_catalog.gelu_tanh.cupy_variants import make_run as gelu_tanh_run

    gelu = gelu_tanh_run(xp)

    def run(inp, out):
        h = xp.add(inp["x"], inp["bias"])  # materialised in the run dtype: the unfused intermediate
        gelu({"x": h}, out)
    return run


@variant("bias_gelu", "cupy-unfused", "cupy", library=True, dtypes=DTYPES)
def cupy_unfused(ctx):
    """h = cupy.add(x, bias), then gelu_tanh(h) as eager ufuncs: h and a temporary go through memory."""
    import cupy

    return make_run(cupy)

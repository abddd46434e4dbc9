"""gemm with CuPy library calls on an NVIDIA/AMD GPU: cupy.matmul(a, b, out=out), which calls cuBLAS (hipBLAS on ROCm).

``make_run(xp, special)`` holds the whole computation written against the
numpy-compatible subset of the array API, so the same code runs with cupy on
a device and with numpy (+ scipy.special) in the tests on a machine without
one. cupy is imported only inside the builder.
"""

from workbench.catalog import variant

DTYPES = ("float16", "float32", "float64")  # cupy has no bfloat16


def make_run(xp, special=None):
    def run(inp, out):
        xp.matmul(inp["a"], inp["b"], out=out["out"])
    return run


@variant("gemm", "cupy", "cupy", library=True, dtypes=DTYPES)
def cupy_gemm(ctx):
    """cupy.matmul(a, b, out=out): cuBLAS gemm (float16 with float32 accumulation by cuBLAS's default)."""
    import cupy

    return make_run(cupy)

"""gemm with CuPy (cuBLAS) on an NVIDIA/AMD GPU; ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("cupy.matmul(a, b, out=out): cuBLAS gemm (float16 with float32 accumulation by cuBLAS's "
                            "default).")
def make_run(xp, special=None):
    def run(inp, out):
        xp.matmul(inp["a"], inp["b"], out=out["out"])
    return run

"""attention prefill with CuPy (cuBLAS matmuls); ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import naive


@kernel_here(__file__).cupy("cupy-naive: q k^T by cuBLAS matmul (KV heads broadcast), -inf above the diagonal, "
                            "softmax, @ v; float16 computed in float32; the seq x seq scores materialised",
                            name="cupy-naive")
def make_run(xp, special=None):
    def run(inp, out):
        out["out"][...] = naive(xp, inp["q"], inp["k"], inp["v"], causal=True)
    return run

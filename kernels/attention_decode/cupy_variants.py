"""attention decode with CuPy (cuBLAS matmuls); ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import naive


@kernel_here(__file__).cupy("cupy-naive: q k^T by cuBLAS matmul (KV heads broadcast), softmax, @ v; float16 "
                            "computed in float32; the heads x kv_len scores materialised", name="cupy-naive")
def make_run(xp, special=None):
    def run(inp, out):
        out["out"][...] = naive(xp, inp["q"][:, :, None, :], inp["k"], inp["v"], causal=False)[:, :, 0, :]
    return run

"""attention_block with CuPy library calls, eager (cuBLAS matmuls, keys and values repeated per query head, a
masked softmax); ``make_run`` runs with numpy too (tests). The recorded form on CuPy is ``portable-graph``."""
from workbench.catalog import kernel_here

from .spec import forward, params_of, rope_tables


@kernel_here(__file__).cupy("The block as CuPy calls, eager: rmsnorm, q/k/v (cuBLAS), RoPE (tables computed on "
                            "the device in float64 per call), repeated KV heads, masked softmax, PV, o + x.")
def make_run(xp, special=None):
    def run(inp, out):
        p = params_of(inp)
        cos, sin = rope_tables(p, inp["x"].dtype, xp)
        out["out"][...], out["k_new"][...], out["v_new"][...] = forward(inp, p, cos, sin, xp)
    return run

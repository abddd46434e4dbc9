"""attention prefill with numpy: the naive composition (scores materialised), the CPU baseline."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import naive_numpy


def naive(inp, out):
    out["out"][...] = naive_numpy(inp["q"], inp["k"], inp["v"], causal=True)


kernel_here(__file__).numpy(naive, "numpy-naive: q k^T by matmul (KV heads broadcast), -inf above the diagonal, "
                                   "softmax, @ v; the seq x seq scores materialised", name="numpy-naive")

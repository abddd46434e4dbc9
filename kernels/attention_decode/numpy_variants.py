"""attention decode with numpy: the naive composition (scores materialised), the CPU baseline."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import naive_numpy


def naive(inp, out):
    out["out"][...] = naive_numpy(inp["q"][:, :, None, :], inp["k"], inp["v"], causal=False)[:, :, 0, :]


kernel_here(__file__).numpy(naive, "numpy-naive: q k^T by matmul (KV heads broadcast), softmax, @ v; the "
                                   "heads x kv_len scores materialised", name="numpy-naive")

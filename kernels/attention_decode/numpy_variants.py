"""attention decode with numpy: the naive composition (scores materialised), the CPU baseline."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.attention import naive


def run(inp, out):
    out["out"][...] = naive(np, inp["q"][:, :, None, :], inp["k"], inp["v"], causal=False)[:, :, 0, :]


kernel_here(__file__).numpy(run, "numpy-naive: q k^T by matmul (KV heads broadcast), softmax, @ v; the "
                                 "heads x kv_len scores materialised", name="numpy-naive")

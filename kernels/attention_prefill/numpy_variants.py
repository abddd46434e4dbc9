"""attention prefill with numpy: the naive composition (scores materialised), the CPU baseline."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.attention import naive


def run(inp, out):
    out["out"][...] = naive(np, inp["q"], inp["k"], inp["v"], causal=True)


kernel_here(__file__).numpy(run, "numpy-naive: q k^T by matmul (KV heads broadcast), -inf above the diagonal, "
                                 "softmax, @ v; the seq x seq scores materialised", name="numpy-naive")

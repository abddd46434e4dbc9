"""gemm_fp8 with numpy, which has no float8 dtype: the bytes decoded through a 256-entry table (a software
upcast, as CPU inference engines do for fp8 checkpoints), then BLAS and the scales. Not the library
baseline: it shows what storage-only fp8 costs without hardware or library support."""
import numpy as np

from workbench.catalog import kernel_here

from .spec import DECODE_TABLE


@kernel_here(__file__).variant("numpy-table", "numpy",
                               description="bytes -> run dtype through a 256-entry table, x @ w.T, * scale")
def build(ctx):
    table = DECODE_TABLE.astype(np.dtype(ctx.dtype))  # every e4m3 value is exact in float16/32/64

    def run(inp, out):
        np.matmul(inp["x"], table[inp["w"]].T, out=out["out"])
        out["out"] *= inp["scale"]
    return run

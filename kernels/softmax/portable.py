"""softmax as a device kernel: portable (shared-memory tree reductions) and CUDA/HIP-only warp shuffles."""

from pathlib import Path

from workbench.portable import per_row, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("softmax", "portable", HERE / "softmax.cu",
                 [per_row("softmax_rows", ("x", "out", "rows", "cols"))],
                 description="one block of 256 threads per row; max and sum by shared-memory tree reduction")

portable_variant("softmax", "cuda-warp-shuffle", HERE / "softmax_warp.cu",
                 [per_row("softmax_rows_warp", ("x", "out", "rows", "cols"))],
                 runtimes=("cupy",), needs_warp=True,
                 description="one block per row; warp-shuffle reductions with the device's warp size "
                             "(CUDA and HIP only; not executed on machines without a GPU)")

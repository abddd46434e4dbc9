"""softmax as a device kernel: portable (shared-memory tree reductions) and CUDA/HIP-only warp shuffles."""
from workbench.catalog import kernel_here
from workbench.portable import per_row, portable_here

op = kernel_here(__file__)
portable_here(op, [per_row("softmax_rows", ("x", "out", "rows", "cols"))],
              description="one block of 256 threads per row; max and sum by shared-memory tree reduction")
portable_here(op, [per_row("softmax_rows_warp", ("x", "out", "rows", "cols"))], name="cuda-warp-shuffle",
              runtimes=("cupy",), needs_warp=True,
              description="one block per row; warp-shuffle reductions with the device's warp size "
                          "(CUDA and HIP only; not executed on machines without a GPU)")

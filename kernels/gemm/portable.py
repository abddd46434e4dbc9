"""gemm as portable device kernels: naive (one thread per output) and tiled in shared memory."""
from workbench.catalog import kernel_here
from workbench.portable import grid_2d, portable_here

TILE = 16
ARGS = ("a", "b", "out", "m", "n", "k")
op = kernel_here(__file__)

portable_here(op, [grid_2d("gemm_naive", ARGS, ("n", "m"), ("TILE", "TILE"))], name="portable-naive",
              defines={"TILE": TILE},
              description=f"{TILE}x{TILE} threads, one output each, every operand from global memory")
portable_here(op, [grid_2d("gemm_tiled", ARGS, ("n", "m"), ("TILE", "TILE"))], name="portable-tiled",
              defines={"TILE": TILE},
              description=f"{TILE}x{TILE} tiles of a and b staged in shared memory; edges zero-filled")

"""gemm_int8 as portable device kernels: one thread per output (the general form), and one block per
output channel with a tree sum (the decode form, m small: coalesced reads of each int8 row)."""
from workbench.catalog import kernel_here
from workbench.portable import Launch, grid_2d, portable_here

op = kernel_here(__file__)
ARGS = ("x", "w", "scale", "out", "m", "n", "k")

portable_here(op, [grid_2d("gemm_int8", ARGS, extent=("n", "m"), block=("TILE_N", "TILE_M"))],
              defines={"TILE_N": 64, "TILE_M": 4},
              description="one thread per output (64x4 blocks over channels x rows); naive k loop, scale after")
portable_here(op, [Launch("gemm_int8_gemv", lambda s: (s["n"],), lambda s: (s["BLOCK"],), ARGS)],
              name="portable-gemv",
              description="one block of 256 per output channel: threads stride k, tree sum per row of x (decode)")

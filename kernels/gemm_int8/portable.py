"""gemm_int8 as a portable device kernel: one thread per output, int8 codes converted in the k loop."""
from workbench.catalog import kernel_here
from workbench.portable import grid_2d, portable_here

portable_here(kernel_here(__file__),
              [grid_2d("gemm_int8", ("x", "w", "scale", "out", "m", "n", "k"), extent=("n", "m"),
                       block=("TILE_N", "TILE_M"))],
              defines={"TILE_N": 64, "TILE_M": 4},
              description="one thread per output (64x4 blocks over channels x rows); naive k loop, scale after")

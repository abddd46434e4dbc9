"""embedding as a portable device kernel: one thread per output element, a 2-D grid (hidden x tokens)."""
from workbench.catalog import kernel_here
from workbench.portable import grid_2d, portable_here

portable_here(kernel_here(__file__),
              [grid_2d("embedding", ("ids", "table", "out", "tokens", "hidden"), extent=("hidden", "tokens"),
                       block=("TILE_X", "TILE_Y"))],
              defines={"TILE_X": 64, "TILE_Y": 4},
              description="one thread per element, 64x4 blocks: coalesced copies of the gathered rows")

"""transpose as portable device kernels: naive (one thread per element) and tiled through shared memory."""
from workbench.catalog import kernel_here
from workbench.portable import grid_2d, portable_here

TILE, TILE_ROWS = 32, 8
ARGS = ("x", "out", "rows", "cols")
DEFINES = {"TILE": TILE, "TILE_ROWS": TILE_ROWS}
op = kernel_here(__file__)

portable_here(op, [grid_2d("transpose_naive", ARGS, ("cols", "rows"), ("TILE", "TILE_ROWS"))], name="portable-naive",
              defines=DEFINES,
              description=f"{TILE}x{TILE_ROWS} threads, one element each: coalesced reads, strided writes")
portable_here(op, [grid_2d("transpose_tiled", ARGS, ("cols", "rows"), ("TILE", "TILE_ROWS"), cover=("TILE", "TILE"))],
              name="portable-tiled", defines=DEFINES,
              description=f"{TILE}x{TILE} tiles staged in shared memory (rows padded to {TILE + 1}), "
                          f"{TILE}x{TILE_ROWS} threads per tile")

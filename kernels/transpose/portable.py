"""transpose as portable device kernels: naive (one thread per element) and tiled through shared memory."""

from pathlib import Path

from workbench.portable import Launch, cdiv, portable_variant

HERE = Path(__file__).resolve().parent
TILE, TILE_ROWS = 32, 8
ARGS = ("x", "out", "rows", "cols")

portable_variant("transpose", "portable-naive", HERE / "transpose.cu",
                 [Launch("transpose_naive", lambda s: (cdiv(s["cols"], s["TILE"]), cdiv(s["rows"], s["TILE_ROWS"])),
                         lambda s: (s["TILE"], s["TILE_ROWS"]), ARGS)],
                 defines={"TILE": TILE, "TILE_ROWS": TILE_ROWS},
                 description=f"{TILE}x{TILE_ROWS} threads, one element each: coalesced reads, strided writes")

portable_variant("transpose", "portable-tiled", HERE / "transpose.cu",
                 [Launch("transpose_tiled", lambda s: (cdiv(s["cols"], s["TILE"]), cdiv(s["rows"], s["TILE"])),
                         lambda s: (s["TILE"], s["TILE_ROWS"]), ARGS)],
                 defines={"TILE": TILE, "TILE_ROWS": TILE_ROWS},
                 description=f"{TILE}x{TILE} tiles staged in shared memory (rows padded to {TILE + 1}), "
                             f"{TILE}x{TILE_ROWS} threads per tile")

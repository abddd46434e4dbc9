"""gemm as portable device kernels: naive (one thread per output) and tiled in shared memory."""

from pathlib import Path

from workbench.portable import Launch, cdiv, portable_variant

HERE = Path(__file__).resolve().parent
TILE = 16
ARGS = ("a", "b", "out", "m", "n", "k")


def _grid(s):
    return cdiv(s["n"], s["TILE"]), cdiv(s["m"], s["TILE"])


def _block(s):
    return s["TILE"], s["TILE"]


portable_variant("gemm", "portable-naive", HERE / "gemm.cu", [Launch("gemm_naive", _grid, _block, ARGS)],
                 defines={"TILE": TILE},
                 description=f"{TILE}x{TILE} threads, one output each, every operand from global memory")

portable_variant("gemm", "portable-tiled", HERE / "gemm.cu", [Launch("gemm_tiled", _grid, _block, ARGS)],
                 defines={"TILE": TILE},
                 description=f"{TILE}x{TILE} tiles of a and b staged in shared memory; edges zero-filled")

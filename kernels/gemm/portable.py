"""gemm as portable device kernels: naive (one thread per output) and tiled in shared memory.

``portable-tiled``'s TILE (the block is TILE x TILE threads, staging TILE x TILE tiles of a and b) is
tunable: the best tile depends on the device's shared memory, warp/wavefront width and cache, so
``workbench tune --kernel gemm --variant portable-tiled --backend opencl-0`` picks it per device.
"""
import dataclasses

from workbench.catalog import Tunable, kernel_here
from workbench.portable import DTYPES, grid_2d, portable_here

TILE = 16
ARGS = ("a", "b", "out", "m", "n", "k")
op = kernel_here(__file__)

portable_here(op, [grid_2d("gemm_naive", ARGS, ("n", "m"), ("TILE", "TILE"))], name="portable-naive",
              defines={"TILE": TILE},
              description=f"{TILE}x{TILE} threads, one output each, every operand from global memory")
_tiled = portable_here(op, [grid_2d("gemm_tiled", ARGS, ("n", "m"), ("TILE", "TILE"))], name="portable-tiled",
                       defines={"TILE": TILE}, description="")


@op.variant("portable-tiled", _tiled.runtimes, dtypes=DTYPES, source=str(_tiled.source),
            description="TILE x TILE tiles of a and b staged in shared memory (TILE tunable, default "
                        f"{TILE}); edges zero-filled",
            tunables=(Tunable("TILE", (8, 16, 32), TILE, "threads per block side and tile side"),))
def build_tiled(ctx):
    """The registered program with the configured TILE (a device without TILE^2 threads per block says
    unsupported)."""
    return dataclasses.replace(_tiled, defines={**_tiled.defines, "TILE": ctx.config["TILE"]}).build(ctx)

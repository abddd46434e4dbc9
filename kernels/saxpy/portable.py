"""saxpy as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""

from pathlib import Path

from workbench.portable import grid_stride, portable_variant

from workbench_catalog.saxpy.spec import ALPHA  # sibling module, loaded by path

HERE = Path(__file__).resolve().parent

portable_variant("saxpy", "portable", HERE / "saxpy.cu",
                 [grid_stride("saxpy", ("x", "y", "out", "alpha", "n"))],
                 scalars={"alpha": ALPHA},
                 description="grid-stride loop, BLOCK=256 threads per block; alpha passed in the accumulator dtype")

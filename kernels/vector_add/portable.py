"""vector_add as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""

from pathlib import Path

from workbench.portable import grid_stride, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("vector_add", "portable", HERE / "vector_add.cu",
                 [grid_stride("vector_add", ("a", "b", "out", "n"))],
                 description="grid-stride loop, BLOCK=256 threads per block")

"""silu as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""

from pathlib import Path

from workbench.portable import grid_stride, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("silu", "portable", HERE / "silu.cu",
                 [grid_stride("silu", ("x", "out", "n"))],
                 description="grid-stride loop, BLOCK=256 threads per block")

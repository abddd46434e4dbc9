"""gelu_erf as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""

from pathlib import Path

from workbench.portable import grid_stride, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("gelu_erf", "portable", HERE / "gelu_erf.cu",
                 [grid_stride("gelu_erf", ("x", "out", "n"))],
                 description="grid-stride loop, BLOCK=256 threads per block")

"""gelu_tanh as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""

from pathlib import Path

from workbench.portable import grid_stride, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("gelu_tanh", "portable", HERE / "gelu_tanh.cu",
                 [grid_stride("gelu_tanh", ("x", "out", "n"))],
                 description="grid-stride loop, BLOCK=256 threads per block")

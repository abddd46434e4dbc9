"""geglu as a portable device kernel (CUDA / HIP / OpenCL from one source): a grid-stride loop."""
from workbench.catalog import kernel_here
from workbench.portable import grid_stride, portable_here

portable_here(kernel_here(__file__), [grid_stride("geglu", ("gate", "up", "out", "n"))],
              description="grid-stride loop, BLOCK=256 threads per block; erf GELU and the product in one pass")

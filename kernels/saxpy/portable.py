"""saxpy as a portable device kernel: a grid-stride loop, alpha passed as a scalar."""
from workbench.catalog import kernel_here
from workbench.portable import grid_stride, portable_here

from .spec import ALPHA

portable_here(kernel_here(__file__), [grid_stride("saxpy", ("x", "y", "out", "alpha", "n"))], scalars={"alpha": ALPHA},
              description="grid-stride loop, BLOCK=256 threads per block; alpha passed in the accumulator dtype")

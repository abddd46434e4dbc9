"""wb_bad as portable device kernels: an honest one and one reading far out of bounds."""
from workbench.catalog import kernel_here
from workbench.portable import grid_stride, portable_here

op = kernel_here(__file__)
portable_here(op, [grid_stride("wb_good", ("a", "b", "out", "n"))], name="portable-good")
portable_here(op, [grid_stride("wb_read_far", ("a", "b", "out", "n"))], name="portable-read-far")
portable_here(op, [grid_stride("wb_one_past", ("a", "b", "out", "n"))], name="portable-one-past")

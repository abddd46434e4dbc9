"""rmsnorm_residual as portable device kernels: fused (one pass per row) and unfused (add, then rmsnorm)."""
from workbench.catalog import kernel_here
from workbench.portable import grid_stride, per_row, portable_here

from .spec import EPS

op = kernel_here(__file__)
portable_here(op, [per_row("rmsnorm_residual_fused",
                           ("x", "residual", "weight", "out", "residual_out", "rows", "cols"))],
              name="portable-fused", defines={"EPS": repr(EPS)}, mode="fused",
              description="one block per row writes residual_out and normalises it in the same kernel")
portable_here(op, [grid_stride("vector_add", ("x", "residual", "residual_out", "n")),
                   per_row("rmsnorm_rows", ("residual_out", "weight", "out", "rows", "cols"))],
              name="portable-unfused", defines={"EPS": repr(EPS)}, derived={"n": lambda s: s["rows"] * s["cols"]},
              description="two launches: the vector_add kernel writes residual_out, the rmsnorm kernel reads it")

"""l2norm as a portable device kernel: one block per row, sum of squares by tree reduction."""
from workbench.catalog import kernel_here
from workbench.portable import per_row, portable_here

from .spec import EPS

portable_here(kernel_here(__file__), [per_row("l2norm_rows", ("x", "out", "rows", "cols"))],
              defines={"EPS": repr(EPS)}, description="one block of 256 threads per row; shared-memory sum")

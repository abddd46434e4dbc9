"""argmax as a portable device kernel: one block per row, (value, index) tree reduction, int64 output."""
from workbench.catalog import kernel_here
from workbench.portable import per_row, portable_here

portable_here(kernel_here(__file__), [per_row("argmax_rows", ("x", "out", "rows", "cols"))],
              description="one block of 256 threads per row; lowest index among equal maxima, NaN wins (numpy)")

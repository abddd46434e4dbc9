"""layernorm as a portable device kernel: one block per row, mean then variance by tree reduction."""
from workbench.catalog import kernel_here
from workbench.portable import per_row, portable_here

from .spec import EPS

portable_here(kernel_here(__file__), [per_row("layernorm_rows", ("x", "weight", "bias", "out", "rows", "cols"))],
              defines={"EPS": repr(EPS)},
              description="one block of 256 threads per row; two-pass mean/variance in shared memory")

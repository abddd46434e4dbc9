"""rmsnorm as a portable device kernel: one block per row, sum of squares by tree reduction."""

from pathlib import Path

from workbench.portable import per_row, portable_variant

from workbench_catalog.rmsnorm.spec import EPS  # sibling module, loaded by path

HERE = Path(__file__).resolve().parent

portable_variant("rmsnorm", "portable", HERE / "rmsnorm.cu",
                 [per_row("rmsnorm_rows", ("x", "weight", "out", "rows", "cols"))],
                 defines={"EPS": repr(EPS)},
                 description="one block of 256 threads per row; sum of squares in shared memory")

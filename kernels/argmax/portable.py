"""argmax as a portable device kernel: one block per row, (value, index) tree reduction, int64 output."""

from pathlib import Path

from workbench.portable import per_row, portable_variant

HERE = Path(__file__).resolve().parent

portable_variant("argmax", "portable", HERE / "argmax.cu",
                 [per_row("argmax_rows", ("x", "out", "rows", "cols"))],
                 description="one block of 256 threads per row; lowest index among equal maxima, NaN wins (numpy)")

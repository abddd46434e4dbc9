"""layernorm as a portable device kernel: one block per row, mean then variance by tree reduction."""

from pathlib import Path

from workbench.portable import per_row, portable_variant

from workbench_catalog.layernorm.spec import EPS  # sibling module, loaded by path

HERE = Path(__file__).resolve().parent

portable_variant("layernorm", "portable", HERE / "layernorm.cu",
                 [per_row("layernorm_rows", ("x", "weight", "bias", "out", "rows", "cols"))],
                 defines={"EPS": repr(EPS)},
                 description="one block of 256 threads per row; two-pass mean/variance in shared memory")

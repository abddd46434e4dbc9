"""rmsnorm_residual as portable device kernels: fused (one pass per row) and unfused (add, then rmsnorm)."""

from pathlib import Path

from workbench.portable import grid_stride, per_row, portable_variant

from workbench_catalog.rmsnorm_residual.spec import EPS  # sibling module, loaded by path

HERE = Path(__file__).resolve().parent

portable_variant("rmsnorm_residual", "portable-fused", HERE / "rmsnorm_residual.cu",
                 [per_row("rmsnorm_residual_fused",
                          ("x", "residual", "weight", "out", "residual_out", "rows", "cols"))],
                 defines={"EPS": repr(EPS)}, mode="fused",
                 description="one block per row writes residual_out and normalises it in the same kernel")

portable_variant("rmsnorm_residual", "portable-unfused", HERE / "rmsnorm_residual.cu",
                 [grid_stride("vector_add", ("x", "residual", "residual_out", "n")),
                  per_row("rmsnorm_rows", ("residual_out", "weight", "out", "rows", "cols"))],
                 defines={"EPS": repr(EPS)}, derived={"n": lambda s: s["rows"] * s["cols"]},
                 description="two launches: the vector_add kernel writes residual_out, the rmsnorm kernel reads it")

"""bias_gelu as portable device kernels: fused (one pass) and unfused (bias add, then gelu_tanh)."""

from pathlib import Path

from workbench.portable import Scratch, grid_stride, portable_variant

HERE = Path(__file__).resolve().parent
elements = lambda s: s["rows"] * s["cols"]  # noqa: E731

portable_variant("bias_gelu", "portable-fused", HERE / "bias_gelu.cu",
                 [grid_stride("bias_gelu_fused", ("x", "bias", "out", "rows", "cols"), n=elements)],
                 mode="fused",
                 description="one grid-stride kernel: x + bias stays in registers, gelu_tanh applied in place")

portable_variant("bias_gelu", "portable-unfused", HERE / "bias_gelu.cu",
                 [grid_stride("bias_add", ("x", "bias", "h", "rows", "cols"), n=elements),
                  grid_stride("gelu_tanh", ("h", "out", "n"), n=elements)],
                 derived={"n": elements},
                 scratch={"h": Scratch(lambda s: (s["rows"], s["cols"]))},
                 description="two launches: bias_add writes h = x + bias (run dtype), the gelu_tanh kernel reads it")

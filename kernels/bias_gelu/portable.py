"""bias_gelu as portable device kernels: fused (one pass) and unfused (bias add, then gelu_tanh)."""
from workbench.catalog import kernel_here
from workbench.portable import Scratch, grid_stride, portable_here

op = kernel_here(__file__)
elements = lambda s: s["rows"] * s["cols"]  # noqa: E731

portable_here(op, [grid_stride("bias_gelu_fused", ("x", "bias", "out", "rows", "cols"), n=elements)],
              name="portable-fused", mode="fused",
              description="one grid-stride kernel: x + bias stays in registers, gelu_tanh applied in place")
portable_here(op, [grid_stride("bias_add", ("x", "bias", "h", "rows", "cols"), n=elements),
                   grid_stride("gelu_tanh", ("h", "out", "n"), n=elements)], name="portable-unfused",
              derived={"n": elements}, scratch={"h": Scratch(lambda s: (s["rows"], s["cols"]))},
              description="two launches: bias_add writes h = x + bias (run dtype), the gelu_tanh kernel reads it")

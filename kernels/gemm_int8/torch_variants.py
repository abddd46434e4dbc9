"""gemm_int8 with torch: the int8 weight-only kernel torch ships for gpt-fast / torchao
(``aten._weight_int8pack_mm``; measured here on the CPU), the dequantise-then-linear form, and torch.compile of it."""
from workbench.catalog import Unsupported, kernel_here

op = kernel_here(__file__)
#: torch 2.13's CPU bfloat16 path of _weight_int8pack_mm reads k in blocks of 16 without a tail (measured).
BF16_CPU_K = 16


def _dequant_linear(x, w, scale):
    import torch.nn.functional as F

    return F.linear(x, w.to(x.dtype)) * scale


@op.variant("torch", "torch", library=True, dtypes=("float32", "float16", "bfloat16"),
            description="torch.ops.aten._weight_int8pack_mm(x, w, scale): torch's int8 weight-only GEMM "
                        "(float32/float16/bfloat16 activations: the op has no float64)")
def build_int8pack(ctx):
    import torch

    op_ = getattr(torch.ops.aten, "_weight_int8pack_mm", None)
    if op_ is None:
        raise Unsupported(f"torch {torch.__version__} has no aten._weight_int8pack_mm")
    if ctx.dtype == "bfloat16" and ctx.backend.device_type == "cpu" and ctx.params["k"] % BF16_CPU_K:
        raise Unsupported(f"torch {torch.__version__}'s CPU aten._weight_int8pack_mm in bfloat16 needs k a multiple "
                          f"of {BF16_CPU_K} (k={ctx.params['k']}): otherwise it returns garbage (k=1) or "
                          "segfaults (k=17), measured")
    return lambda i, o: op_(i["x"], i["w"], i["scale"])


op.torch("torch-dequant", lambda torch, i, o: _dequant_linear(i["x"], i["w"], i["scale"]),
         "F.linear(x, w.to(x.dtype)) * scale: the weights dequantised per call, then the library GEMM.")
op.torch_compile(_dequant_linear, "torch.compile of F.linear(x, w.to(x.dtype)) * scale.")

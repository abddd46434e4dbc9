"""bias_gelu fused as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

A 2-D grid: program (r, j) reads ``BLOCK`` columns of row r and the matching slice of ``bias``, adds, and
writes gelu_tanh of the sum; the sum never leaves registers. Columns past ``cols`` are masked, so any row
length works without one block per row. 0.5 (1 + tanh(u)) is computed as 1 / (1 + exp(-2u)) (the same
identity as gelu_tanh's Triton variant: no portable tanh in ``triton.language``). The spec's constants are
``constexpr`` arguments: a jitted kernel may read no plain module globals. triton is imported inside the
builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import COEF, SQRT_2_OVER_PI

BLOCK = 1024


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, cols, x_stride, out_stride,
                         S2PI: tl.constexpr, COEF: tl.constexpr, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < cols
        h = tl.load(x_ptr + row * x_stride + offs, mask=mask) + tl.load(bias_ptr + offs, mask=mask)
        u = S2PI * (h + COEF * h * h * h)
        tl.store(out_ptr + row * out_stride + offs, h / (1.0 + tl.exp(-2.0 * u)), mask=mask)

    return bias_gelu_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"fused: one program per row and {BLOCK} columns, masked tail; float32")
def build(ctx):
    import triton

    kernel, rows, cols = _kernel(), ctx.params["rows"], ctx.params["cols"]
    grid = (rows, triton.cdiv(cols, BLOCK))

    def run(inp, out):
        x, o = inp["x"], out["out"]
        kernel[grid](x, inp["bias"], o, cols, x.stride(0), o.stride(0), S2PI=SQRT_2_OVER_PI, COEF=COEF, BLOCK=BLOCK)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-column blocks, 4 warps.
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "bias_ptr": "*fp32", "out_ptr": "*fp32", "cols": "i32",
                                   "x_stride": "i32", "out_stride": "i32", "S2PI": "constexpr", "COEF": "constexpr",
                                   "BLOCK": "constexpr"},
                         {"S2PI": SQRT_2_OVER_PI, "COEF": COEF, "BLOCK": BLOCK}, label=f"BLOCK={BLOCK}"),)

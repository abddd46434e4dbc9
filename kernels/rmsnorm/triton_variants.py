"""rmsnorm as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

One program per row, the row in one masked block of ``next_power_of_2(cols)`` lanes (masked lanes load 0
and add nothing to the sum of squares). triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import EPS


def num_warps(block: int) -> int:
    """4 warps up to 2048 lanes, then one warp per 512 lanes, at most 16: at most 16 floats a thread up to 8192."""
    return min(16, max(4, block // 512))


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, cols, x_stride, out_stride, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
        tl.store(out_ptr + row * out_stride + offs, x * rstd * w, mask=mask)

    return rmsnorm_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description="one program per row, the row in one masked power-of-two block; float32")
def build(ctx):
    import triton

    kernel, rows, cols = _kernel(), ctx.params["rows"], ctx.params["cols"]
    block = triton.next_power_of_2(cols)

    def run(inp, out):
        x, o = inp["x"], out["out"]
        kernel[(rows,)](x, inp["weight"], o, cols, x.stride(0), o.stride(0), EPS, BLOCK=block,
                        num_warps=num_warps(block))
    return run


#: ``workbench compile-check`` compiles the kernel at a 4096-column row (one 4096-lane block, 8 warps).
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "cols": "i32",
                                   "x_stride": "i32", "out_stride": "i32", "eps": "fp32", "BLOCK": "constexpr"},
                         {"BLOCK": 4096}, num_warps=num_warps(4096), label="BLOCK=4096"),)

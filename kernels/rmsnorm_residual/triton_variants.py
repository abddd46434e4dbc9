"""rmsnorm_residual fused as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

One program per row: it reads the row of ``x`` and ``residual`` once, writes ``residual_out = x + residual``
and, from the same registers, ``out = residual_out / sqrt(mean(residual_out^2) + eps) * weight``, the
spec's two outputs in one pass (the unfused form writes residual_out and reads it back). The row is one
masked block of ``next_power_of_2(cols)`` lanes (masked lanes load 0 and add nothing to the sum of
squares); warps grow with the block as in the layernorm variant. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import EPS


def num_warps(block: int) -> int:
    """4 warps up to 2048 lanes, then one warp per 512 lanes, at most 16."""
    return min(16, max(4, block // 512))


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def rmsnorm_residual_kernel(x_ptr, res_ptr, w_ptr, out_ptr, res_out_ptr, cols, x_stride, res_stride,
                                out_stride, res_out_stride, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        h = (tl.load(x_ptr + row * x_stride + offs, mask=mask, other=0.0)
             + tl.load(res_ptr + row * res_stride + offs, mask=mask, other=0.0))
        tl.store(res_out_ptr + row * res_out_stride + offs, h, mask=mask)
        rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / cols + eps)
        w = tl.load(w_ptr + offs, mask=mask)
        tl.store(out_ptr + row * out_stride + offs, h * rstd * w, mask=mask)

    return rmsnorm_residual_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description="fused: one program per row writes residual_out and out, the row in "
                                           "one masked power-of-two block; float32")
def build(ctx):
    import triton

    kernel, rows, cols = _kernel(), ctx.params["rows"], ctx.params["cols"]
    block = triton.next_power_of_2(cols)

    def run(inp, out):
        x, r, o, ro = inp["x"], inp["residual"], out["out"], out["residual_out"]
        kernel[(rows,)](x, r, inp["weight"], o, ro, cols, x.stride(0), r.stride(0), o.stride(0), ro.stride(0),
                        EPS, BLOCK=block, num_warps=num_warps(block))
    return run


#: ``workbench compile-check`` compiles the kernel at a 4096-column row (one 4096-lane block, 8 warps).
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "res_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32",
                                   "res_out_ptr": "*fp32", "cols": "i32", "x_stride": "i32", "res_stride": "i32",
                                   "out_stride": "i32", "res_out_stride": "i32", "eps": "fp32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 4096}, num_warps=num_warps(4096),
                         label="BLOCK=4096"),)

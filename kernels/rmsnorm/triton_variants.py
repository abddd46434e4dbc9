"""rmsnorm as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

One program per row, the row in one masked block of ``next_power_of_2(cols)`` lanes (masked lanes load 0
and add nothing to the sum of squares). triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here

from .spec import EPS


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
        kernel[(rows,)](x, inp["weight"], o, cols, x.stride(0), o.stride(0), EPS, BLOCK=block)
    return run

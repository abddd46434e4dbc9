"""argmax as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32 in, int64 out.

One program per row walks the row in ``BLOCK``-column chunks, so any row length works (a vocabulary of
128k columns too) without one huge block. Each lane keeps its running maximum and where it was first seen
(a strict ``>`` keeps the earlier column on a tie); at the end the row maximum is ``tl.max`` over the lanes
and the index is the smallest column among lanes holding it: numpy's first-index rule, which the spec
accepts (it takes any maximal index). Masked columns load -inf and never win. triton is imported inside
the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

#: Columns per step of a row's loop (fewer for narrower rows).
MAX_BLOCK = 1024


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def argmax_kernel(x_ptr, out_ptr, cols, x_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        best = tl.full((BLOCK,), float("-inf"), tl.float32)
        best_at = tl.zeros((BLOCK,), dtype=tl.int32)
        for start in range(0, cols, BLOCK):
            idx = start + offs
            v = tl.load(x_ptr + row * x_stride + idx, mask=idx < cols, other=float("-inf"))
            take = v > best
            best = tl.where(take, v, best)
            best_at = tl.where(take, idx, best_at)
        top = tl.max(best, axis=0)
        first = tl.min(tl.where(best == top, best_at, cols), axis=0)
        tl.store(out_ptr + row, first.to(tl.int64))

    return argmax_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per row, a loop over {MAX_BLOCK}-column chunks with "
                                           "per-lane running maxima, first index on ties; float32")
def build(ctx):
    import triton

    kernel, rows, cols = _kernel(), ctx.params["rows"], ctx.params["cols"]
    block = min(MAX_BLOCK, triton.next_power_of_2(cols))

    def run(inp, out):
        x = inp["x"]
        kernel[(rows,)](x, out["out"], cols, x.stride(0), BLOCK=block)
    return run


#: ``workbench compile-check`` compiles the kernel as it runs on rows of 1024 columns or more (4 warps).
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "out_ptr": "*i64", "cols": "i32", "x_stride": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": MAX_BLOCK}, label=f"BLOCK={MAX_BLOCK}"),)

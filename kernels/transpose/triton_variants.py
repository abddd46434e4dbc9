"""transpose as a Triton kernel over 2-D tiles (runtime ``triton``: the interpreter on CPU tensors here); float32.

Program (i, j) loads the ``TILE`` x ``TILE`` tile of ``x`` at rows i*TILE.., columns j*TILE.. (contiguous
along columns) and stores ``tl.trans`` of it into ``out`` (contiguous along what were rows). On a GPU the
compiler routes the tile through shared memory so both the load and the store are coalesced; both are
masked, so odd shapes work. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

TILE = 64


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def transpose_kernel(x_ptr, out_ptr, rows, cols, x_stride, out_stride, TILE: tl.constexpr):
        r = tl.program_id(0) * TILE + tl.arange(0, TILE)
        c = tl.program_id(1) * TILE + tl.arange(0, TILE)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        tile = tl.load(x_ptr + r[:, None] * x_stride + c[None, :], mask=mask)
        tl.store(out_ptr + c[:, None] * out_stride + r[None, :], tl.trans(tile), mask=tl.trans(mask))

    return transpose_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"{TILE}x{TILE} tiles, tl.trans between a coalesced load and store, "
                                           "masked edges; float32")
def build(ctx):
    import triton

    kernel, rows, cols = _kernel(), ctx.params["rows"], ctx.params["cols"]
    grid = (triton.cdiv(rows, TILE), triton.cdiv(cols, TILE))

    def run(inp, out):
        x, o = inp["x"], out["out"]
        kernel[grid](x, o, rows, cols, x.stride(0), o.stride(0), TILE=TILE)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 64x64 tiles, 4 warps.
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32",
                                   "x_stride": "i32", "out_stride": "i32", "TILE": "constexpr"},
                         {"TILE": TILE}, label=f"TILE={TILE}"),)

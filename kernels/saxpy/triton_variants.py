"""saxpy as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

triton is imported inside the builder only, so the catalog loads without it.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import ALPHA

BLOCK = 1024


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def saxpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, alpha * x + y, mask=mask)

    return saxpy_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per {BLOCK} elements, masked tail; float32")
def build(ctx):
    import triton

    kernel, n = _kernel(), ctx.params["n"]
    grid = (triton.cdiv(n, BLOCK),)

    def run(inp, out):
        kernel[grid](inp["x"], inp["y"], out["out"], ALPHA, n, BLOCK=BLOCK)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "alpha": "fp32",
                                   "n": "i32", "BLOCK": "constexpr"},
                         {"BLOCK": BLOCK}, label=f"BLOCK={BLOCK}"),)

"""gelu_erf as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

``tl.math.erf`` (``triton.language.math``; checked in triton 3.9) lowers to libdevice's ``erff`` on NVIDIA and OCML's
``erf`` on AMD, and to ``math.erf`` per element under the interpreter, so no approximation of our own is
needed. 1/sqrt(2) is a ``constexpr`` argument (a jitted kernel may read no plain module globals). One
program per ``BLOCK`` elements, masked tail. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import INV_SQRT2

BLOCK = 1024


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def gelu_erf_kernel(x_ptr, out_ptr, n, INV_SQRT2: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * INV_SQRT2)), mask=mask)

    return gelu_erf_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per {BLOCK} elements, masked tail, tl.math.erf; float32")
def build(ctx):
    import triton

    kernel, n = _kernel(), ctx.params["n"]
    grid = (triton.cdiv(n, BLOCK),)

    def run(inp, out):
        kernel[grid](inp["x"], out["out"], n, INV_SQRT2=INV_SQRT2, BLOCK=BLOCK)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "INV_SQRT2": "constexpr",
                                   "BLOCK": "constexpr"}, {"INV_SQRT2": INV_SQRT2, "BLOCK": BLOCK},
                         label=f"BLOCK={BLOCK}"),)

"""silu as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

out = x / (1 + exp(-x)), the spec's formula: for x << 0 exp overflows to inf and out is -0, no NaN.
One program per ``BLOCK`` elements, masked tail. triton is imported inside the builder only.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)

    return silu_kernel


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("x", "out"))

"""relu as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

triton is imported inside the builder only, so the catalog loads without it.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)

    return relu_kernel


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("x", "out"))

"""vector_add as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

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
    def vector_add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, a + b, mask=mask)

    return vector_add_kernel


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("a", "b", "out"))

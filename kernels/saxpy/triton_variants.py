"""saxpy as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

triton is imported inside the builder only, so the catalog loads without it.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here

from .spec import ALPHA


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


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("x", "y", "out"), scalars={"alpha": ALPHA})

"""gelu_erf as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

``tl.math.erf`` (``triton.language.math``; checked in triton 3.9) lowers to libdevice's ``erff`` on NVIDIA and OCML's
``erf`` on AMD, and to ``math.erf`` per element under the interpreter, so no approximation of our own is
needed. 1/sqrt(2) is a ``constexpr`` argument (a jitted kernel may read no plain module globals). One
program per ``BLOCK`` elements, masked tail. triton is imported inside the builder only.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here

from .spec import INV_SQRT2


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


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("x", "out"), constexprs={"INV_SQRT2": INV_SQRT2})

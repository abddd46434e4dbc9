"""swiglu as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

out = gate / (1 + exp(-gate)) * up, the spec's formula (exp overflows to inf for gate << 0: -0 * up, no
NaN). One program per 1024 elements, masked tail (``workbench.authoring.triton_support.register_triton_map``); triton is
imported inside the builder only.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def swiglu_kernel(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(gate_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, g / (1.0 + tl.exp(-g)) * tl.load(up_ptr + offs, mask=mask), mask=mask)

    return swiglu_kernel


COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("gate", "up", "out"))

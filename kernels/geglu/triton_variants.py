"""geglu as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

out = 0.5 gate (1 + erf(gate / sqrt 2)) * up with ``tl.math.erf`` (libdevice erff on NVIDIA, OCML on AMD,
math.erf under the interpreter). One program per 1024 elements, masked tail
(``workbench.authoring.triton_support.register_triton_map``); triton is imported inside the builder only.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def geglu_kernel(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(gate_ptr + offs, mask=mask)
        gelu = 0.5 * g * (1.0 + tl.math.erf(g * 0.7071067811865476))  # 1/sqrt(2): jit sees no globals
        tl.store(out_ptr + offs, gelu * tl.load(up_ptr + offs, mask=mask), mask=mask)

    return geglu_kernel


COMPILE = register_triton_map(kernel_here(__file__), _kernel, ("gate", "up", "out"))

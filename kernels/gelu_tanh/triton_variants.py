"""gelu_tanh as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

``triton.language`` has no portable tanh (only the per-vendor libdevice modules do), so the kernel uses
the identity 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)): out = x / (1 + exp(-2u)) with
u = sqrt(2/pi) (x + 0.044715 x^3), the spec's formula exactly, one exp and no cancellation (for u << 0
exp overflows to inf and out is -0, as 0.5 x (1 + tanh(u)) rounds to). The spec's constants are
``constexpr`` arguments (a jitted kernel may read no plain module globals). One program per ``BLOCK``
elements, masked tail. triton is imported inside the builder only.
"""
import functools

from workbench.authoring.triton_support import register_triton_map
from workbench.catalog import kernel_here

from .spec import COEF, SQRT_2_OVER_PI


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def gelu_tanh_kernel(x_ptr, out_ptr, n, S2PI: tl.constexpr, COEF: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        u = S2PI * (x + COEF * x * x * x)
        tl.store(out_ptr + offs, x / (1.0 + tl.exp(-2.0 * u)), mask=mask)

    return gelu_tanh_kernel


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = register_triton_map(kernel_here(__file__), _kernel,
                              ("x", "out"),
                              constexprs={"S2PI": SQRT_2_OVER_PI, "COEF": COEF},
                              description=", 0.5(1 + tanh u) as 1/(1 + exp(-2u))")

"""gelu_tanh as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

``triton.language`` has no portable tanh (only the per-vendor libdevice modules do), so the kernel uses
the identity 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)): out = x / (1 + exp(-2u)) with
u = sqrt(2/pi) (x + 0.044715 x^3), the spec's formula exactly, one exp and no cancellation (for u << 0
exp overflows to inf and out is -0, as 0.5 x (1 + tanh(u)) rounds to). The spec's constants are
``constexpr`` arguments (a jitted kernel may read no plain module globals). One program per ``BLOCK``
elements, masked tail. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

from .spec import COEF, SQRT_2_OVER_PI

BLOCK = 1024


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


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per {BLOCK} elements, masked tail, "
                                           "0.5(1 + tanh u) as 1/(1 + exp(-2u)); float32")
def build(ctx):
    import triton

    kernel, n = _kernel(), ctx.params["n"]
    grid = (triton.cdiv(n, BLOCK),)

    def run(inp, out):
        kernel[grid](inp["x"], out["out"], n, S2PI=SQRT_2_OVER_PI, COEF=COEF, BLOCK=BLOCK)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "S2PI": "constexpr",
                                   "COEF": "constexpr", "BLOCK": "constexpr"},
                         {"S2PI": SQRT_2_OVER_PI, "COEF": COEF, "BLOCK": BLOCK}, label=f"BLOCK={BLOCK}"),)

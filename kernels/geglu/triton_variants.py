"""geglu as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32.

out = 0.5 gate (1 + erf(gate / sqrt 2)) * up with ``tl.math.erf`` (libdevice erff on NVIDIA, OCML on AMD,
math.erf under the interpreter). One program per ``BLOCK`` elements, masked tail. triton is imported
inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

BLOCK = 1024


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def geglu_kernel(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(gate_ptr + offs, mask=mask)
        u = tl.load(up_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, 0.5 * g * (1.0 + tl.math.erf(g * 0.7071067811865476)) * u, mask=mask)

    return geglu_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"one program per {BLOCK} elements, masked tail; float32")
def build(ctx):
    import triton

    kernel, n = _kernel(), ctx.params["n"]
    grid = (triton.cdiv(n, BLOCK),)

    def run(inp, out):
        kernel[grid](inp["gate"], inp["up"], out["out"], n, BLOCK=BLOCK)
    return run


#: ``workbench compile-check`` compiles the kernel as the variant launches it: 1024-element blocks, 4 warps.
COMPILE = (TritonCompile(_kernel, {"gate_ptr": "*fp32", "up_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": BLOCK}, label=f"BLOCK={BLOCK}"),)

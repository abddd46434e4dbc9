"""sum as two Triton kernels (runtime ``triton``: the interpreter on CPU tensors here); float32.

Deterministic, no atomics: pass 1 gives each program ``BLOCK`` elements and writes their float32 sum
(``tl.sum``, a tree inside the block, error ~ log2(BLOCK) ulps) to a partials buffer; pass 2, one program,
adds the partials in float64 lanes and tree-sums the lanes, so combining the blocks adds no float32
error. The result is the same on every run, and its error stays well below the spec's float32 tolerance
(2e-6, which rejects sequential float32 accumulation). The partials buffer is allocated on the first call
and reused. triton is imported inside the builder only.
"""
import functools

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

#: Elements per pass-1 program, and lanes of the pass-2 program.
BLOCK, FINAL_BLOCK = 4096, 1024


@functools.cache
def _partials_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def sum_partials_kernel(x_ptr, partials_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(partials_ptr + pid, tl.sum(x, axis=0))

    return sum_partials_kernel


@functools.cache
def _final_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def sum_final_kernel(partials_ptr, out_ptr, m, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float64)
        for start in range(0, m, BLOCK):
            idx = start + offs
            acc += tl.load(partials_ptr + idx, mask=idx < m, other=0.0).to(tl.float64)
        tl.store(out_ptr, tl.sum(acc, axis=0).to(tl.float32))

    return sum_final_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description=f"two passes: float32 tree sums of {BLOCK}-element blocks, then one "
                                           "program adds the partials in float64; deterministic; float32")
def build(ctx):
    import torch
    import triton

    partials_kernel, final_kernel, n = _partials_kernel(), _final_kernel(), ctx.params["n"]
    blocks = triton.cdiv(n, BLOCK)
    scratch = {}

    def run(inp, out):
        x = inp["x"]
        partials = scratch.get(x.device)
        if partials is None:
            partials = scratch[x.device] = torch.empty(blocks, dtype=torch.float32, device=x.device)
        partials_kernel[(blocks,)](x, partials, n, BLOCK=BLOCK)
        final_kernel[(1,)](partials, out["out"], blocks, BLOCK=FINAL_BLOCK)
    return run


#: ``workbench compile-check`` compiles both passes as the variant launches them (4 warps each).
COMPILE = (TritonCompile(_partials_kernel, {"x_ptr": "*fp32", "partials_ptr": "*fp32", "n": "i32",
                                            "BLOCK": "constexpr"}, {"BLOCK": BLOCK}, label=f"partials BLOCK={BLOCK}"),
           TritonCompile(_final_kernel, {"partials_ptr": "*fp32", "out_ptr": "*fp32", "m": "i32",
                                         "BLOCK": "constexpr"}, {"BLOCK": FINAL_BLOCK},
                         label=f"final BLOCK={FINAL_BLOCK}"))

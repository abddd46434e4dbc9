"""Triton on a real GPU, before the workbench has a Triton backend: a masked vector add at an odd size vs torch."""
import torch
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 1_000_003
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.full_like(x, float("nan"))
add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
torch.cuda.synchronize()
print("triton", triton.__version__, "vector add n=1000003 max abs err", (out - (x + y)).abs().max().item(),
      "nan:", bool(out.isnan().any()))
ms = triton.testing.do_bench(lambda: add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024))
print(f"do_bench median {ms*1e3:.1f} us, {3*4*n/ms/1e6:.0f} GB/s")

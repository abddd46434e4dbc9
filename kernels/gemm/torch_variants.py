"""gemm with torch on any torch device: torch.matmul into the output (BLAS / oneDNN / cuBLAS), and torch.compile."""
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch.matmul(i["a"], i["b"], out=o["out"]), "torch.matmul(a, b, out=out).",
    compiled=lambda a, b: a @ b,
    compile_doc="torch.compile of a @ b (inductor picks a library call or a generated template).")

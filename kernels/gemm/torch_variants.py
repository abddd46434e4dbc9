"""gemm with torch on any torch device: torch.matmul into the output (BLAS / oneDNN / cuBLAS), and torch.compile."""

from workbench.catalog import variant

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _matmul(a, b):
    return a @ b


@variant("gemm", "torch", "torch", library=True, dtypes=DTYPES)
def torch_matmul(ctx):
    """torch.matmul(a, b, out=out)."""
    import torch

    def run(inp, out):
        torch.matmul(inp["a"], inp["b"], out=out["out"])
    return run


@variant("gemm", "torch-compile", "torch", mode="compiled", dtypes=DTYPES)
def torch_compiled(ctx):
    """torch.compile of a @ b (inductor picks a library call or a generated template)."""
    from workbench.catalog.torch_support import compile_for

    fn = compile_for(ctx, "gemm", _matmul, ("a", "b"))

    def run(inp, out):
        return fn(inp["a"], inp["b"])
    return run

"""mlp_block with CuPy library calls, eager (cuBLAS matmuls, elementwise kernels); ``make_run`` runs with numpy
too (tests). The recorded form on CuPy is ``portable-graph`` (a CUDA/HIP graph of the portable kernels)."""
from workbench.catalog import kernel_here

from .spec import forward


@kernel_here(__file__).cupy("The block as CuPy calls, eager: rmsnorm, x@w_gate, x@w_up (cuBLAS), SwiGLU, @w_down, "
                            "+ x; each step allocates its result.")
def make_run(xp, special=None):
    def run(inp, out):
        out["out"][...] = forward(inp, xp)
    return run

"""rope with CuPy on an NVIDIA/AMD GPU: one ElementwiseKernel per output (``cupy``, CuPy's idiomatic best: each
element reads its half-split pair and the token's cos/sin, float16 computed in float), and the reference's pair
expression (``workbench.catalog.rope.rotate``) on slices in the run dtype (``cupy-unfused``); the same code with
numpy is the numpy variant."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.cupy_fused import compute_type, rope_half_kernel
from workbench.catalog.rope import rotate_qk

op = kernel_here(__file__)


@op.cupy("a * cos - b * sin, b * cos + a * sin (pairs i, i + head_dim/2) as one cupy.ElementwiseKernel per "
         "output, one thread per element (float16 computed in float): two launches, q's and k's.")
def make_fused(cupy, special=None):
    def run(inp, out):
        half = inp["q"].shape[-1] // 2
        kernel = rope_half_kernel(cupy, compute_type(inp["q"].dtype))
        for x, o in (("q", "q_out"), ("k", "k_out")):
            kernel(inp[x], inp["cos"], inp["sin"], inp[x].shape[1], half, out[o])
    return run


@op.cupy("a * cos - b * sin, b * cos + a * sin on cupy slices into the outputs: eager, one launch per term.",
         name="cupy-unfused")
def make_run(xp, special=None):
    return lambda inp, out: rotate_qk(xp, inp, out, "half")


op.numpy(make_run(np), "a * cos - b * sin, b * cos + a * sin on numpy slices into the outputs, a temporary per term.")

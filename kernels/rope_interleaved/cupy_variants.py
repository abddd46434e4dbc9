"""rope_interleaved with CuPy on an NVIDIA/AMD GPU, and the same code with numpy (the numpy variant): the reference's
pair expression (``workbench.catalog.rope.rotate``) in the run dtype, interleaved pairs."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rope import rotate_qk

op = kernel_here(__file__)


@op.cupy("a * cos - b * sin, b * cos + a * sin on cupy slices into the outputs: eager, one launch per term.")
def make_run(xp, special=None):
    return lambda inp, out: rotate_qk(xp, inp, out, "interleaved")


op.numpy(make_run(np), "a * cos - b * sin, b * cos + a * sin on numpy slices into the outputs, a temporary per term.")

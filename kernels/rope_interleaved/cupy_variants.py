"""rope_interleaved with CuPy on an NVIDIA/AMD GPU, and the same code with numpy (the numpy variant): the reference's
pair expression (``workbench.catalog.rope.rotate``) in the run dtype."""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rope import rotate

LAYOUT = "interleaved"
op = kernel_here(__file__)


@op.cupy("a * cos - b * sin, b * cos + a * sin on cupy slices into the outputs: eager, one launch per term.")
def make_run(xp, special=None):
    def run(inp, out):
        rotate(xp, inp["q"], inp["cos"], inp["sin"], LAYOUT, out["q_out"])
        rotate(xp, inp["k"], inp["cos"], inp["sin"], LAYOUT, out["k_out"])
    return run


op.numpy(make_run(np), "a * cos - b * sin, b * cos + a * sin on the interleaved pairs: numpy slices into the "
         "outputs, a temporary per term.")

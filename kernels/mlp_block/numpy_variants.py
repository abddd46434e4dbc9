"""mlp_block with numpy: eager (temporaries per step, as numpy code is written) and graph (a preallocated out= plan).

numpy has no graphs and no fusion: ``graph`` here is the plan an engine
makes instead — every intermediate allocated once per shape and every step
writing into it — so the allocator leaves the per-call path. ``fused`` is
unsupported (each numpy call is its own pass over memory).
"""
import numpy as np

from workbench.catalog import Unsupported, kernel_here
from workbench.execution import register_cached

from .spec import EPS, forward

op = kernel_here(__file__)


def eager(inp, out):
    out["out"][...] = forward(inp)


op.numpy(eager, "Step by step as numpy code is written: rmsnorm, x@w_gate, x@w_up, SwiGLU, @w_down, + x; "
                "each step allocates its result.", name="numpy-eager")


def rmsnorm_into(x, weight, ss, xn) -> None:
    """xn = rmsnorm(x) * weight through the buffers ss [..., 1] and xn (no allocation)."""
    np.multiply(x, x, out=xn)
    np.mean(xn, axis=-1, keepdims=True, out=ss)
    np.add(ss, EPS, out=ss)
    np.sqrt(ss, out=ss)
    np.divide(x, ss, out=xn)
    np.multiply(xn, weight, out=xn)


def record_plan(ctx):
    """The same steps over buffers allocated once per shape (np.matmul / ufuncs with out=)."""
    t, h, i = ctx.params["tokens"], ctx.params["hidden"], ctx.params["intermediate"]
    dt = np.dtype(ctx.dtype)
    ss, xn, g, u, d = (np.empty(s, dt) for s in ((t, 1), (t, h), (t, i), (t, i), (t, h)))

    def run(inp, out):
        x = inp["x"]
        rmsnorm_into(x, inp["norm_weight"], ss, xn)
        np.matmul(xn, inp["w_gate"], out=g)
        np.matmul(xn, inp["w_up"], out=u)
        np.multiply(u, g, out=u)  # SwiGLU in place: u * g / (1 + exp(-g))
        np.negative(g, out=g)
        np.exp(g, out=g)
        np.add(g, 1, out=g)
        np.divide(u, g, out=u)
        np.matmul(u, inp["w_down"], out=d)
        np.add(x, d, out=out["out"])
    return run


register_cached(op, "numpy-graph", "numpy", "graph", record_plan)


@op.variant("numpy-fused", "numpy", mode="fused")
def numpy_fused(ctx):
    """numpy has no fused kernels."""
    raise Unsupported("numpy has no fused kernels: every ufunc and matmul is its own pass over memory")

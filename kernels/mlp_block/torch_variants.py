"""mlp_block with torch on any torch device: eager, graph (CUDA graph / out= plan) and fused (torch.compile).

- ``torch-eager``: the block as a model's forward writes it (F.rms_norm,
  two matmuls, F.silu, a multiply, a matmul and the residual add), each op
  allocating its result.
- ``torch-graph``: on CUDA, ``torch.cuda.CUDAGraph`` captured once per shape
  (and per set of input addresses, see ``workbench.execution.replay``) and
  replayed; elsewhere (CPU) the preallocated ``out=`` plan — every op writes
  into a buffer allocated once per shape. On the CPU torch.jit.trace + freeze
  was the other candidate; ``tests/perf/blocks.py`` measures it beside the plan.
- ``torch-fused``: torch.compile (inductor) of the block, once per shape; a compile
  that fails falls back to eager and is counted in the cache's statistics.
"""
from workbench.catalog import kernel_here
from workbench.execution import register_cached

from .spec import EPS

op = kernel_here(__file__)


def block(x, norm_weight, w_gate, w_up, w_down):
    """The forward pass; torch-eager runs it as is and torch-fused compiles it."""
    import torch.nn.functional as F

    xn = F.rms_norm(x, x.shape[-1:], norm_weight, EPS)
    return x + (F.silu(xn @ w_gate) * (xn @ w_up)) @ w_down


ARGS = ("x", "norm_weight", "w_gate", "w_up", "w_down")


@op.variant("torch-eager", "torch", library=True)
def torch_eager(ctx):
    """The forward as a model writes it: rms_norm, matmul, matmul, silu, multiply, matmul, add."""
    def run(inp, out):
        return block(*(inp[n] for n in ARGS))
    return run


def rmsnorm_into(torch, x, weight, ss, xn) -> None:
    """xn = rmsnorm(x) * weight through the buffers ss [..., 1] and xn (no allocation)."""
    torch.mul(x, x, out=xn)
    torch.mean(xn, -1, keepdim=True, out=ss)
    ss.add_(EPS).rsqrt_()
    torch.mul(x, ss, out=xn).mul_(weight)


def out_plan(ctx):
    """The same ops writing into buffers allocated once per shape (out= and in-place forms)."""
    import torch

    t, h, i = ctx.params["tokens"], ctx.params["hidden"], ctx.params["intermediate"]
    ss, xn, d, g, u = (ctx.backend.empty(s, ctx.dtype) for s in ((t, 1), (t, h), (t, h), (t, i), (t, i)))

    def run(inp, out):
        x = inp["x"]
        rmsnorm_into(torch, x, inp["norm_weight"], ss, xn)
        torch.mm(xn, inp["w_gate"], out=g)
        torch.mm(xn, inp["w_up"], out=u)
        torch.nn.functional.silu(g, inplace=True)
        u.mul_(g)
        torch.mm(u, inp["w_down"], out=d)
        torch.add(x, d, out=out["out"])
    return run


def record_graph(ctx):
    """CUDA/HIP: a CUDAGraph of the out= plan per shape and input addresses; CPU and others: the out= plan."""
    from workbench.execution.torch_graph import graph_or_plan

    return graph_or_plan(ctx, out_plan(ctx))


def record_compiled(ctx):
    """torch.compile (inductor) of the block for this shape (fullgraph, static shapes)."""
    from workbench.authoring.torch_support import compile_for

    compiled = compile_for(ctx, op.name, block, ARGS)
    return lambda inp, out: compiled(*(inp[n] for n in ARGS))


register_cached(op, "torch-graph", "torch", "graph", record_graph)
register_cached(op, "torch-fused", "torch", "fused", record_compiled, eager=lambda ctx: torch_eager(ctx))

"""attention_block with torch on any torch device: eager, graph (CUDA graph / out= plan) and fused (torch.compile).

- ``torch-eager``: the forward as Hugging Face's Llama/Qwen attention writes
  it (F.rms_norm, three projections, rotate-half RoPE, cat onto the cache,
  ``scaled_dot_product_attention`` with ``enable_gqa`` and a causal mask,
  output projection, residual add), each op allocating its result.
- ``torch-graph``: on CUDA a ``torch.cuda.CUDAGraph`` of the out= plan per
  shape (and input addresses); on the CPU the out= plan itself — buffers
  allocated once per shape, every op writing into one.
- ``torch-fused``: torch.compile (inductor) of the eager forward.
"""
import math

from workbench.catalog import kernel_here
from workbench.execution import register_cached

from .spec import EPS, rope_tables

op = kernel_here(__file__)
ARGS = ("x", "norm_weight", "wq", "wk", "wv", "wo", "k_cache", "v_cache")


def constants(ctx):
    """cos/sin [seq, head_dim] (both halves) and the causal mask [seq, past+seq] (True: may attend), on the device."""
    import torch

    from workbench.core.dtypes import round_to

    p = ctx.params
    cos, sin = (torch.cat([t, t], dim=-1)
                for t in (ctx.backend.to_device(round_to(a, ctx.dtype), ctx.dtype) for a in rope_tables(p)))
    pos = torch.arange(p["past"] + p["seq"], device=cos.device)
    mask = pos[None, :] <= p["past"] + torch.arange(p["seq"], device=cos.device)[:, None]
    return cos, sin, mask


def make_forward(ctx):
    """The eager forward for ``ctx``'s shape: a function of the spec's inputs returning (out, k_new, v_new)."""
    import torch
    import torch.nn.functional as F

    p = ctx.params
    nh, nkv, d = p["heads"], p["kv_heads"], p["head_dim"]
    cos, sin, mask = constants(ctx)

    def rotate(t):
        t1, t2 = t.chunk(2, dim=-1)
        return t * cos + torch.cat([-t2, t1], dim=-1) * sin

    def forward(x, norm_weight, wq, wk, wv, wo, k_cache, v_cache):
        b, s, h = x.shape
        xn = F.rms_norm(x, (h,), norm_weight, EPS)
        q = rotate((xn @ wq).view(b, s, nh, d).transpose(1, 2))
        k = rotate((xn @ wk).view(b, s, nkv, d).transpose(1, 2))
        v = (xn @ wv).view(b, s, nkv, d).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, torch.cat([k_cache, k], dim=2), torch.cat([v_cache, v], dim=2),
                                           attn_mask=mask, enable_gqa=nh != nkv)
        return x + o.transpose(1, 2).reshape(b, s, nh * d) @ wo, k, v
    return forward


@op.variant("torch-eager", "torch", library=True)
def torch_eager(ctx):
    """Hugging Face's attention forward: rms_norm, q/k/v projections, RoPE, cat onto the cache, SDPA (GQA,
    causal mask), o projection + residual."""
    forward = make_forward(ctx)

    def run(inp, out):
        o, k, v = forward(*(inp[n] for n in ARGS))
        return {"out": o, "k_new": k, "v_new": v}
    return run


def out_plan(ctx):
    """The same steps over buffers allocated once per shape (out= and in-place ops; GQA by reshaping the
    queries, explicit masked softmax)."""
    import torch
    from workbench_catalog.mlp_block.torch_variants import rmsnorm_into

    p = ctx.params
    b, s, past, nh, nkv, d = p["batch"], p["seq"], p["past"], p["heads"], p["kv_heads"], p["head_dim"]
    h, length, group = p["hidden"], past + s, nh // nkv
    cos, sin, mask = constants(ctx)
    empty = ctx.backend.empty
    ss, xn, proj = empty((b, s, 1), ctx.dtype), empty((b, s, h), ctx.dtype), empty((b, s, h), ctx.dtype)
    q, k, v = (empty((b, s, n * d), ctx.dtype) for n in (nh, nkv, nkv))
    qr, rot = empty((b, nh, s, d), ctx.dtype), empty((b, nh, s, d), ctx.dtype)
    keys, values = empty((b, nkv, length, d), ctx.dtype), empty((b, nkv, length, d), ctx.dtype)
    scores = empty((b, nkv, group * s, length), ctx.dtype)
    o, attn = empty((b, nkv, group * s, d), ctx.dtype), empty((b, s, nh * d), ctx.dtype)
    blocked = ~mask.repeat(group, 1)  # [group*s, length]: rows ordered (g, s) as in the reshaped queries
    scale = 1.0 / math.sqrt(d)

    def rotate(src, dst, n):  # src [b, s, n*d] -> dst [b, n, s, d]
        t = src.view(b, s, n, d).transpose(1, 2)
        r = rot[:, :n]
        half = d // 2
        torch.neg(t[..., half:], out=r[..., :half])
        r[..., half:].copy_(t[..., :half])
        torch.mul(t, cos, out=dst)
        dst.addcmul_(r, sin)

    def run(inp, out):
        x = inp["x"]
        rmsnorm_into(torch, x, inp["norm_weight"], ss, xn)
        for w, dst in (("wq", q), ("wk", k), ("wv", v)):
            torch.matmul(xn, inp[w], out=dst)
        rotate(q, qr, nh)
        rotate(k, out["k_new"], nkv)
        out["v_new"].copy_(v.view(b, s, nkv, d).transpose(1, 2))
        keys[:, :, :past].copy_(inp["k_cache"])
        keys[:, :, past:].copy_(out["k_new"])
        values[:, :, :past].copy_(inp["v_cache"])
        values[:, :, past:].copy_(out["v_new"])
        torch.matmul(qr.view(b, nkv, group * s, d), keys.transpose(2, 3), out=scores)
        scores.mul_(scale).masked_fill_(blocked, -math.inf)
        torch.softmax(scores, dim=-1, out=scores)
        torch.matmul(scores, values, out=o)
        attn.view(b, s, nh, d).copy_(o.view(b, nh, s, d).transpose(1, 2))
        torch.matmul(attn, inp["wo"], out=proj)
        torch.add(x, proj, out=out["out"])
    return run


def record_graph(ctx):
    """CUDA/HIP: a CUDAGraph of the out= plan per shape and input addresses; CPU and others: the out= plan."""
    from workbench.execution.torch_graph import graph_or_plan

    return graph_or_plan(ctx, out_plan(ctx))


def record_compiled(ctx):
    """torch.compile (inductor) of the eager forward for this shape (fullgraph, static shapes)."""
    from workbench.authoring.torch_support import compile_for

    compiled = compile_for(ctx, op.name, make_forward(ctx), ARGS)

    def run(inp, out):
        o, k, v = compiled(*(inp[n] for n in ARGS))
        return {"out": o, "k_new": k, "v_new": v}
    return run


register_cached(op, "torch-graph", "torch", "graph", record_graph)
register_cached(op, "torch-fused", "torch", "fused", record_compiled, eager=lambda ctx: torch_eager(ctx))

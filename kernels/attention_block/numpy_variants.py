"""attention_block with numpy: eager (the forward as numpy code writes it) and graph (a preallocated plan).

``graph`` on numpy is the plan an engine makes instead of a graph: every
intermediate allocated once per shape, each step writing into it, the
grouped-query heads read through a reshape instead of repeating the keys.
``fused`` is unsupported: each numpy call is its own pass over memory.
"""
import math

import numpy as np

from workbench.catalog import Unsupported, kernel_here
from workbench.execution import register_cached

from .spec import forward, rope_tables

op = kernel_here(__file__)


@op.variant("numpy-eager", "numpy", library=True)
def numpy_eager(ctx):
    """rmsnorm, q/k/v matmuls, RoPE, keys and values repeated per query head, masked softmax, PV, o matmul + x."""
    cos, sin = rope_tables(ctx.params, ctx.dtype)

    def run(inp, out):
        out["out"][...], out["k_new"][...], out["v_new"][...] = forward(inp, ctx.params, cos, sin)
    return run


def record_plan(ctx):
    """The same steps over buffers allocated once per shape (np.matmul / ufuncs with out=)."""
    from workbench_catalog.mlp_block.numpy_variants import rmsnorm_into

    p, dt = ctx.params, np.dtype(ctx.dtype)
    b, s, past, nh, nkv, d = p["batch"], p["seq"], p["past"], p["heads"], p["kv_heads"], p["head_dim"]
    h, half, length, group = p["hidden"], d // 2, p["past"] + p["seq"], nh // nkv
    cos, sin = rope_tables(p, ctx.dtype)
    buf = {name: np.empty(shape, dt) for name, shape in {
        "ss": (b, s, 1), "xn": (b, s, h), "q": (b, s, nh * d), "k": (b, s, nkv * d), "v": (b, s, nkv * d),
        "qr": (b, nh, s, d), "tmp": (b, nh, s, half), "keys": (b, nkv, length, d), "values": (b, nkv, length, d),
        "scores": (b, nkv, group * s, length), "mx": (b, nkv, group * s, 1), "o": (b, nkv, group * s, d),
        "attn": (b, s, nh * d), "proj": (b, s, h)}.items()}
    masked = np.arange(length)[None, :] > past + np.arange(s)[:, None]  # [s, length]
    masked = np.broadcast_to(masked[None, :, :], (group, s, length)).reshape(group * s, length)
    scale = dt.type(1.0 / math.sqrt(d))

    def rotate(src, dst, n):  # src [b, s, n*d] -> dst [b, n, s, d], rotate-half RoPE
        t = src.reshape(b, s, n, d).transpose(0, 2, 1, 3)
        tmp = buf["tmp"][:, :n]
        np.multiply(t[..., :half], cos, out=dst[..., :half])
        np.multiply(t[..., half:], sin, out=tmp)
        np.subtract(dst[..., :half], tmp, out=dst[..., :half])
        np.multiply(t[..., half:], cos, out=dst[..., half:])
        np.multiply(t[..., :half], sin, out=tmp)
        np.add(dst[..., half:], tmp, out=dst[..., half:])

    def run(inp, out):
        x = inp["x"]
        rmsnorm_into(x, inp["norm_weight"], buf["ss"], buf["xn"])
        xn = buf["xn"]
        for w, name in (("wq", "q"), ("wk", "k"), ("wv", "v")):
            np.matmul(xn, inp[w], out=buf[name])
        rotate(buf["q"], buf["qr"], nh)
        rotate(buf["k"], out["k_new"], nkv)
        out["v_new"][...] = buf["v"].reshape(b, s, nkv, d).transpose(0, 2, 1, 3)
        keys, values, scores, mx = buf["keys"], buf["values"], buf["scores"], buf["mx"]
        keys[:, :, :past], keys[:, :, past:] = inp["k_cache"], out["k_new"]
        values[:, :, :past], values[:, :, past:] = inp["v_cache"], out["v_new"]
        q = buf["qr"].reshape(b, nkv, group * s, d)  # head kv*group + g reads kv head kv
        np.matmul(q, keys.transpose(0, 1, 3, 2), out=scores)
        np.multiply(scores, scale, out=scores)
        scores[..., masked] = -np.inf
        np.max(scores, axis=-1, keepdims=True, out=mx)
        np.subtract(scores, mx, out=scores)
        np.exp(scores, out=scores)
        np.sum(scores, axis=-1, keepdims=True, out=mx)
        np.divide(scores, mx, out=scores)
        np.matmul(scores, values, out=buf["o"])
        buf["attn"][...] = buf["o"].reshape(b, nh, s, d).transpose(0, 2, 1, 3).reshape(b, s, nh * d)
        np.matmul(buf["attn"], inp["wo"], out=buf["proj"])
        np.add(x, buf["proj"], out=out["out"])
    return run


register_cached(op, "numpy-graph", "numpy", "graph", record_plan)


@op.variant("numpy-fused", "numpy", mode="fused")
def numpy_fused(ctx):
    """numpy has no fused kernels."""
    raise Unsupported("numpy has no fused kernels: every ufunc and matmul is its own pass over memory")

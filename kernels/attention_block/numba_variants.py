"""attention_block with numba: eager (one Python dispatch per kernel), graph (one compiled driver), fused kernels.

The attention itself is one online-softmax kernel (a query's scores are never
stored) in every mode; the modes differ in how the ten steps around it are
launched:

- ``numba-eager``: rmsnorm, three projections, RoPE on q and k, the v split,
  attention, the output projection and the residual add, each called from
  Python with fresh intermediates;
- ``numba-graph``: the same kernels inside one ``@njit`` driver over buffers
  allocated once per shape;
- ``numba-fused``: three kernels — rmsnorm + q/k/v projections + RoPE, the
  attention, and the output projection with the residual add in its epilogue.
"""
import functools

import numpy as np

from workbench.authoring.numba_support import line_buffers
from workbench.catalog import kernel_here
from workbench.execution import register_cached

from .spec import rope_tables

op = kernel_here(__file__)


@functools.cache
def kernels(dtype: str):
    """The block's own numba kernels for ``dtype``, beside mlp_block's rmsnorm / GEMM / residual add."""
    from numba import njit, prange
    from workbench_catalog.mlp_block.numba_variants import COLS
    from workbench_catalog.mlp_block.numba_variants import kernels as mlp_kernels

    from workbench.authoring.numba_math import exp_for, numpy_dtype
    from workbench.authoring.numba_support import disk_cached

    t = numpy_dtype(dtype)
    zero, one, exp = t(0.0), t(1.0), exp_for(dtype)
    shared = mlp_kernels(dtype)
    rmsnorm = shared["rmsnorm"]

    @njit(parallel=True, fastmath=True)
    def rope_heads(src, cos, sin, dst):  # src [b*s, n*d] -> dst [b, n, s, d], rotate-half
        b, n, s, d = dst.shape
        half = d // 2
        for task in prange(b * n):
            bi, hh = task // n, task % n
            for i in range(s):
                row = src[bi * s + i]
                for j in range(half):
                    t1, t2, c, sn = row[hh * d + j], row[hh * d + half + j], cos[i, j], sin[i, j]
                    dst[bi, hh, i, j] = t1 * c - t2 * sn
                    dst[bi, hh, i, half + j] = t2 * c + t1 * sn

    @njit(parallel=True, fastmath=True)
    def split_heads(src, dst):  # src [b*s, n*d] -> dst [b, n, s, d]
        b, n, s, d = dst.shape
        for task in prange(b * n):
            bi, hh = task // n, task % n
            for i in range(s):
                for e in range(d):
                    dst[bi, hh, i, e] = src[bi * s + i, hh * d + e]

    @njit(parallel=True, fastmath=True)
    def attention(q, k_cache, v_cache, k_new, v_new, out):  # q [b, nh, s, d] -> out [b*s, nh*d], causal, GQA
        b, nh, s, d = q.shape
        nkv, past = k_cache.shape[1], k_cache.shape[2]
        group = nh // nkv
        scale = one / np.sqrt(t(d))
        for task in prange(b * nh * s):
            bi, hh, i = task // (nh * s), (task // s) % nh, task % s
            kv = hh // group
            qv = q[bi, hh, i]
            o = out[bi * s + i, hh * d:(hh + 1) * d]
            m, total = -np.inf, zero
            for e in range(d):
                o[e] = zero
            for j in range(past + i + 1):
                kr = k_cache[bi, kv, j] if j < past else k_new[bi, kv, j - past]
                vr = v_cache[bi, kv, j] if j < past else v_new[bi, kv, j - past]
                sc = zero
                for e in range(d):
                    sc += qv[e] * kr[e]
                sc *= scale
                if sc > m:  # a new maximum: rescale what was summed so far (exp of -inf never taken)
                    if total > zero:
                        corr = exp(m - sc)
                        total *= corr
                        for e in range(d):
                            o[e] *= corr
                    m = sc
                w = exp(sc - m)
                total += w
                for e in range(d):
                    o[e] += w * vr[e]
            for e in range(d):
                o[e] /= total

    @njit(parallel=True, fastmath=True)
    def norm_qkv_rope(x, weight, wq, wk, wv, cos, sin, xn, q, k, v, qr, k_new, v_new):
        m, h = x.shape
        rmsnorm(x, weight, xn)  # prologue: the normalised rows, once
        nq, nk = (wq.shape[1] + COLS - 1) // COLS, (wk.shape[1] + COLS - 1) // COLS
        for task in prange(nq + 2 * nk):  # the three projections as one set of column tasks
            if task < nq:
                w, o, jb = wq, q, task
            elif task < nq + nk:
                w, o, jb = wk, k, task - nq
            else:
                w, o, jb = wv, v, task - nq - nk
            j0 = jb * COLS
            j1 = min(j0 + COLS, w.shape[1])
            for r in range(m):
                orow = o[r]
                for j in range(j0, j1):
                    orow[j] = zero
                for p in range(h):
                    xv, wr = xn[r, p], w[p]
                    for j in range(j0, j1):
                        orow[j] += xv * wr[j]
        rope_heads(q, cos, sin, qr)
        rope_heads(k, cos, sin, k_new)
        split_heads(v, v_new)

    ks = {"rope_heads": rope_heads, "split_heads": split_heads, "attention": attention,
          "norm_qkv_rope": norm_qkv_rope}
    return {**shared, **{n: disk_cached(k, salt=f"{dtype}-attn-{n}") for n, k in ks.items()}}


def _buffers(ctx):
    p, dt = ctx.params, np.dtype(ctx.dtype)
    tokens, d = p["batch"] * p["seq"], p["head_dim"]
    qd, kvd = p["heads"] * d, p["kv_heads"] * d
    shapes = {"xn": (tokens, p["hidden"]), "q": (tokens, qd), "k": (tokens, kvd), "v": (tokens, kvd),
              "qr": (p["batch"], p["heads"], p["seq"], d), "attn": (tokens, qd), "proj": (tokens, p["hidden"])}
    return line_buffers(shapes, dt)


def _tables(ctx):
    return rope_tables(ctx.params, ctx.dtype)


def _rows(a):
    """[batch, seq, n] as [batch*seq, n] (a view: the harness passes contiguous arrays)."""
    return a.reshape(-1, a.shape[-1])


@op.variant("numba-eager", "numba")
def numba_eager(ctx):
    """Ten numba kernels called one by one from Python; intermediates allocated per call."""
    k, (cos, sin) = kernels(ctx.dtype), _tables(ctx)

    def run(inp, out):
        b, x = _buffers(ctx), _rows(inp["x"])
        k["rmsnorm"](x, inp["norm_weight"], b["xn"])
        for w, name in (("wq", "q"), ("wk", "k"), ("wv", "v")):
            k["gemm"](b["xn"], inp[w], b["xn"], b[name])
        k["rope_heads"](b["q"], cos, sin, b["qr"])
        k["rope_heads"](b["k"], cos, sin, out["k_new"])
        k["split_heads"](b["v"], out["v_new"])
        k["attention"](b["qr"], inp["k_cache"], inp["v_cache"], out["k_new"], out["v_new"], b["attn"])
        k["gemm"](b["attn"], inp["wo"], b["attn"], b["proj"])
        k["residual_add"](x, b["proj"], _rows(out["out"]))

    return run


@functools.cache
def driver(dtype: str):
    """The graph: one @njit function running the ten kernels over preallocated buffers."""
    from numba import njit

    k = kernels(dtype)
    rmsnorm, gemm, rope_heads, split_heads = k["rmsnorm"], k["gemm"], k["rope_heads"], k["split_heads"]
    attention, residual_add = k["attention"], k["residual_add"]

    @njit
    def block(x, norm_weight, wq, wk, wv, wo, k_cache, v_cache, out, k_new, v_new, cos, sin,
              xn, q, kk, v, qr, attn, proj):
        rmsnorm(x, norm_weight, xn)
        gemm(xn, wq, xn, q)
        gemm(xn, wk, xn, kk)
        gemm(xn, wv, xn, v)
        rope_heads(q, cos, sin, qr)
        rope_heads(kk, cos, sin, k_new)
        split_heads(v, v_new)
        attention(qr, k_cache, v_cache, k_new, v_new, attn)
        gemm(attn, wo, attn, proj)
        residual_add(x, proj, out)
    return block


def record_driver(ctx):
    """The ten kernels inside one @njit driver over buffers allocated once per shape: one dispatch per block."""
    block, b, (cos, sin) = driver(ctx.dtype), _buffers(ctx), _tables(ctx)

    def run(inp, out):
        block(_rows(inp["x"]), inp["norm_weight"], inp["wq"], inp["wk"], inp["wv"], inp["wo"], inp["k_cache"],
              inp["v_cache"], _rows(out["out"]), out["k_new"], out["v_new"], cos, sin,
              b["xn"], b["q"], b["k"], b["v"], b["qr"], b["attn"], b["proj"])
    return run


def record_fused(ctx):
    """Three kernels: rmsnorm + q/k/v projections + RoPE, the attention, the o projection + residual."""
    k, b, (cos, sin) = kernels(ctx.dtype), _buffers(ctx), _tables(ctx)
    first, attention, last = k["norm_qkv_rope"], k["attention"], k["gemm_residual"]

    def run(inp, out):
        x = _rows(inp["x"])
        first(x, inp["norm_weight"], inp["wq"], inp["wk"], inp["wv"], cos, sin, b["xn"], b["q"], b["k"], b["v"],
              b["qr"], out["k_new"], out["v_new"])
        attention(b["qr"], inp["k_cache"], inp["v_cache"], out["k_new"], out["v_new"], b["attn"])
        last(b["attn"], inp["wo"], x, _rows(out["out"]))
    return run


register_cached(op, "numba-graph", "numba", "graph", record_driver)
register_cached(op, "numba-fused", "numba", "fused", record_fused, eager=lambda ctx: numba_eager(ctx))

"""attention decode with numba: flash-decoding (split-KV online softmax).

The cache of each (batch, KV head) is cut into chunks of CHUNK keys; work items are (batch, KV head,
chunk), spread over the cores, so even batch 1 with one KV head keeps every core busy. An item reads
its chunk of K and V once for all the query heads of its group (decode is memory-bound: the cache is
the traffic), keeping per query head a running maximum, sum and d-wide accumulator, and leaves them
in a partials buffer; a second parallel pass merges a head's chunks (rescaling each by
exp(m_chunk - m)) and normalises. Extra memory: the partials, heads x (d + 2) per chunk, i.e.
O(kv_len / CHUNK); the scores are never stored beyond one key.
"""
from workbench.catalog import kernel_here

CHUNK = 256  # keys per work item: 256 x 128 float32 K+V = 256 KiB, an L2's worth


@kernel_here(__file__).numba("numba-flash")
def flash_decode_kernel(t):
    """Split-KV online softmax over (batch, KV head, chunk) items, then a merge pass over (batch, head)."""
    import numpy as np
    from numba import njit, prange

    from workbench.authoring.numba_math import exp_for, fmax, line_empty

    exp, zero, one, lowest = exp_for(t.__name__), t(0.0), t(1.0), t(-3.0e38)

    @njit(fastmath=True)
    def chunk(q, k, v, b, kvh, group, j0, j1, pm, pl, pacc):
        """Partials of keys j0..j1 for the group's query heads: pm/pl[g], pacc[g, :]."""
        d = q.shape[2]
        scale = t(1.0 / np.sqrt(d))
        for g in range(group):
            qg = q[b, kvh * group + g]
            mx, total = lowest, zero
            acc = pacc[g]
            for c in range(d):
                acc[c] = zero
            for j in range(j0, j1):
                kr = k[b, kvh, j]
                s = zero
                for c in range(d):
                    s += qg[c] * kr[c]
                s *= scale
                if s > mx:  # a new maximum: rescale what is accumulated so far
                    alpha = exp(mx - s)
                    total *= alpha
                    for c in range(d):
                        acc[c] *= alpha
                    mx = s
                e = exp(s - mx)
                total += e
                vr = v[b, kvh, j]
                for c in range(d):
                    acc[c] += e * vr[c]
            pm[g], pl[g] = mx, total

    @njit(parallel=True, fastmath=True)
    def attention(q, k, v, out):
        batch, heads, d = q.shape
        kv_heads, kv_len = k.shape[1], k.shape[2]
        group = heads // kv_heads
        nchunks = (kv_len + CHUNK - 1) // CHUNK
        pm = np.empty((batch, kv_heads, nchunks, group), t)
        pl = np.empty((batch, kv_heads, nchunks, group), t)
        pacc = line_empty(batch * kv_heads * nchunks * group * d, t).reshape((batch, kv_heads, nchunks, group, d))
        for item in prange(batch * kv_heads * nchunks):
            bk, ci = item // nchunks, item % nchunks
            b, kvh = bk // kv_heads, bk % kv_heads
            chunk(q, k, v, b, kvh, group, ci * CHUNK, min(kv_len, ci * CHUNK + CHUNK),
                  pm[b, kvh, ci], pl[b, kvh, ci], pacc[b, kvh, ci])
        for bh in prange(batch * heads):
            b, h = bh // heads, bh % heads
            kvh, g = h // group, h % group
            mx = lowest
            for ci in range(nchunks):
                mx = fmax(mx, pm[b, kvh, ci, g])
            total = zero
            o = out[b, h]
            for c in range(d):
                o[c] = zero
            for ci in range(nchunks):
                w = exp(pm[b, kvh, ci, g] - mx)
                total += w * pl[b, kvh, ci, g]
                a = pacc[b, kvh, ci, g]
                for c in range(d):
                    o[c] += w * a[c]
            inv = one / total
            for c in range(d):
                o[c] *= inv

    return attention

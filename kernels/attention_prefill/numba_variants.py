"""attention prefill with numba: a tiled online-softmax (flash-style) kernel.

Work items are (batch, head, block of BQ queries), spread over the cores. Each walks the key blocks
at or below its diagonal (causal: the blocks above are never touched, half the work of a masked
dense product), computing a BQ x BK tile of scores, folding it into a running row maximum ``m``, row
sum ``l`` and BQ x d output accumulator (the online softmax: earlier contributions are rescaled by
exp(m_old - m_new)), and writes out = acc / l at the end. Extra memory is per work item and per
thread, O(BQ (d + BK)) whatever seq is: the seq x seq scores never exist.

Inner loops are written to vectorize: the key tile is transposed once (kt[d, BK]) so a score row is
BK-wide FMAs over d, and p v is d-wide FMAs over the keys; both fold eight products into each load and
store of the row they accumulate (measured 2x faster than one at a time: the plain loops were bound
by those loads and stores, not by the FMAs); exp is numba_math's polynomial exp (vectorizes;
libm's would not). Masked (future) keys are cut off by loop bounds, never by -inf, because
fastmath assumes no infinities.
"""
from workbench.catalog import kernel_here

BQ = 64  # queries per work item: each key tile is reused BQ times from L1/L2
BK = 64  # keys per tile: the BK-wide score row is 4 AVX-512 / 8 AVX2 float32 vectors


@kernel_here(__file__).numba("numba-flash")
def flash_kernel(t):
    """Tiled online softmax over (batch, head, query-block) work items; O(BQ (d + BK)) scratch per item."""
    import numpy as np
    from numba import njit, prange

    from workbench.authoring.numba_math import exp_for, fmax, line_empty

    exp, zero, one, lowest = exp_for(t.__name__), t(0.0), t(1.0), t(-3.0e38)

    @njit(fastmath=True)
    def scores(qr, kt, srow):
        """srow[:] = qr . kt[:, j]: BK-wide FMAs, eight rows of kt per pass over srow (one load and
        one store of srow per eight FMAs instead of per one)."""
        d = qr.shape[0]
        d8 = d - d % 8
        for jj in range(BK):
            srow[jj] = zero
        for c in range(0, d8, 8):
            a0, a1, a2, a3, a4, a5, a6, a7 = qr[c], qr[c + 1], qr[c + 2], qr[c + 3], qr[c + 4], qr[c + 5], \
                qr[c + 6], qr[c + 7]
            k0, k1, k2, k3, k4, k5, k6, k7 = kt[c], kt[c + 1], kt[c + 2], kt[c + 3], kt[c + 4], kt[c + 5], \
                kt[c + 6], kt[c + 7]
            for jj in range(BK):
                srow[jj] += (a0 * k0[jj] + a1 * k1[jj] + a2 * k2[jj] + a3 * k3[jj]) + (
                    a4 * k4[jj] + a5 * k5[jj] + a6 * k6[jj] + a7 * k7[jj])
        for c in range(d8, d):
            a, kc = qr[c], kt[c]
            for jj in range(BK):
                srow[jj] += a * kc[jj]

    @njit(fastmath=True)
    def accumulate(p, vh, j0, lim, arow):
        """arow += sum_jj p[jj] v[j0 + jj]: d-wide FMAs, eight keys per pass over arow."""
        d = arow.shape[0]
        l8 = lim - lim % 8
        for jj in range(0, l8, 8):
            j = j0 + jj
            p0, p1, p2, p3, p4, p5, p6, p7 = p[jj], p[jj + 1], p[jj + 2], p[jj + 3], p[jj + 4], p[jj + 5], \
                p[jj + 6], p[jj + 7]
            v0, v1, v2, v3, v4, v5, v6, v7 = vh[j], vh[j + 1], vh[j + 2], vh[j + 3], vh[j + 4], vh[j + 5], \
                vh[j + 6], vh[j + 7]
            for c in range(d):
                arow[c] += (p0 * v0[c] + p1 * v1[c] + p2 * v2[c] + p3 * v3[c]) + (
                    p4 * v4[c] + p5 * v5[c] + p6 * v6[c] + p7 * v7[c])
        for jj in range(l8, lim):
            pv, vr = p[jj], vh[j0 + jj]
            for c in range(d):
                arow[c] += pv * vr[c]

    @njit(fastmath=True)
    def query_block(q, k, v, out, b, h, kvh, i0, i1):
        d = q.shape[3]
        nq = i1 - i0
        scale = t(1.0 / np.sqrt(d))
        qs = line_empty(BQ * d, t).reshape((BQ, d))  # tiles on cache lines in every process
        kt = line_empty(d * BK, t).reshape((d, BK))
        kt[:, :] = 0
        s = line_empty(BQ * BK, t).reshape((BQ, BK))
        acc = line_empty(BQ * d, t).reshape((BQ, d))
        acc[:, :] = 0
        m = np.full(BQ, lowest, t)
        ssum = np.zeros(BQ, t)
        for r in range(nq):
            for c in range(d):
                qs[r, c] = q[b, h, i0 + r, c] * scale
        for j0 in range(0, i1, BK):  # causal: key blocks up to the last query of the block
            nk = min(i1, j0 + BK) - j0
            for jj in range(nk):
                for c in range(d):
                    kt[c, jj] = k[b, kvh, j0 + jj, c]
            for jj in range(nk, BK):  # the last tile's padding: zero keys (their scores are never used)
                for c in range(d):
                    kt[c, jj] = zero
            for r in range(nq):
                lim = min(nk, i0 + r - j0 + 1)  # keys j <= i of this row in the tile
                if lim <= 0:
                    continue
                scores(qs[r], kt, s[r])
                srow = s[r]
                mx = m[r]
                for jj in range(lim):
                    mx = fmax(mx, srow[jj])
                alpha = exp(m[r] - mx)
                m[r] = mx
                total = zero
                for jj in range(lim):
                    e = exp(srow[jj] - mx)
                    srow[jj] = e
                    total += e
                ssum[r] = ssum[r] * alpha + total
                arow = acc[r]
                for c in range(d):
                    arow[c] *= alpha
                accumulate(srow, v[b, kvh], j0, lim, arow)
        for r in range(nq):
            inv = one / ssum[r]
            for c in range(d):
                out[b, h, i0 + r, c] = acc[r, c] * inv

    @njit(parallel=True, fastmath=True)
    def attention(q, k, v, out):
        batch, heads, seq, _ = q.shape
        group = heads // k.shape[1]
        nqb = (seq + BQ - 1) // BQ
        for item in prange(batch * heads * nqb):
            bh, qb = item // nqb, item % nqb
            b, h = bh // heads, bh % heads
            query_block(q, k, v, out, b, h, h // group, qb * BQ, min(seq, qb * BQ + BQ))

    return attention

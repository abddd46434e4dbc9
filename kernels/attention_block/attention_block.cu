/* The decoder attention block's kernels, for its eager and graph device plans (workbench.execution.device_plan).
 *
 * rmsnorm_rows, gemm_naive / gemm_tiled and residual_add come from the MLP block's source; this file adds
 * the head split with RoPE and a causal, grouped-query attention with an online softmax (no score matrix).
 * HEAD_DIM is a build-time #define (the per-query accumulator lives in registers / private memory).
 */
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#include "../mlp_block/mlp_block.cu"

/* dst[b, n, s, d] from src[b*s, n*d]: rotate-half RoPE with cos/sin [s, d/2] when rotate != 0, else a copy. */
KERNEL void rope_heads(const GLOBAL real* RESTRICT src, const GLOBAL real* RESTRICT cosv,
                       const GLOBAL real* RESTRICT sinv, GLOBAL real* RESTRICT dst,
                       int batch, int n, int seq, int rotate)
{
    const int half_d = HEAD_DIM / 2;
    const int total = batch * n * seq * half_d;
    for (int idx = BLOCK_X * BLOCK_DIM_X + THREAD_X; idx < total; idx += GRID_DIM_X * BLOCK_DIM_X) {
        const int j = idx % half_d;
        const int i = (idx / half_d) % seq;
        const int hh = (idx / (half_d * seq)) % n;
        const int bi = idx / (half_d * seq * n);
        const size_t s_off = (size_t)(bi * seq + i) * n * HEAD_DIM + (size_t)hh * HEAD_DIM;
        const size_t d_off = ((size_t)(bi * n + hh) * seq + i) * HEAD_DIM;
        const acc_t t1 = LOAD(src, s_off + j), t2 = LOAD(src, s_off + half_d + j);
        if (rotate) {
            const acc_t c = LOAD(cosv, (size_t)i * half_d + j), sn = LOAD(sinv, (size_t)i * half_d + j);
            STORE(dst, d_off + j, t1 * c - t2 * sn);
            STORE(dst, d_off + half_d + j, t2 * c + t1 * sn);
        } else {
            STORE(dst, d_off + j, t1);
            STORE(dst, d_off + half_d + j, t2);
        }
    }
}

/* One block of BLOCK threads per (batch, query head, query): q [b, nh, s, d] against the cache [b, nkv, past, d]
 * and the new keys [b, nkv, s, d] up to its own position; writes out[b*s, nh*d]. Online softmax, one pass
 * over keys. Thread t owns output elements t, t + BLOCK, ...: each key's score is a block-wide sum of the
 * threads' partial dot products, so no thread holds a whole query or output row in registers (a work-item
 * per row kept 2 x HEAD_DIM values and spilled on AMD, and in float64 everywhere). */
#define ATT_PER_THREAD ((HEAD_DIM + BLOCK - 1) / BLOCK)
KERNEL void attention_rows(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k_cache,
                           const GLOBAL real* RESTRICT v_cache, const GLOBAL real* RESTRICT k_new,
                           const GLOBAL real* RESTRICT v_new, GLOBAL real* RESTRICT out,
                           int batch, int nh, int nkv, int seq, int past)
{
    SHARED acc_t scratch[BLOCK];
    const int task = BLOCK_X;  /* uniform per block: every thread reaches every barrier */
    if (task >= batch * nh * seq) return;
    const int t = THREAD_X;
    const int i = task % seq, hh = (task / seq) % nh, bi = task / (seq * nh);
    const int kv = hh / (nh / nkv);
    const acc_t scale = RSQRT((acc_t)HEAD_DIM);
    const GLOBAL real* qr = q + ((size_t)(bi * nh + hh) * seq + i) * HEAD_DIM;
    acc_t qv[ATT_PER_THREAD], acc[ATT_PER_THREAD];
    for (int r = 0; r < ATT_PER_THREAD; ++r) {
        const int e = t + r * BLOCK;
        qv[r] = e < HEAD_DIM ? LOAD(qr, e) * scale : LIT(0.0);
        acc[r] = LIT(0.0);
    }
    acc_t m = LIT(0.0), total = LIT(0.0);
    for (int j = 0; j <= past + i; ++j) {
        const int cached = j < past;
        const GLOBAL real* kr = cached ? k_cache : k_new;
        const GLOBAL real* vr = cached ? v_cache : v_new;
        const size_t off = cached ? ((size_t)(bi * nkv + kv) * past + j) * HEAD_DIM
                                  : ((size_t)(bi * nkv + kv) * seq + (j - past)) * HEAD_DIM;
        acc_t part = LIT(0.0);
        for (int r = 0; r < ATT_PER_THREAD; ++r) {
            const int e = t + r * BLOCK;
            if (e < HEAD_DIM) part += qv[r] * LOAD(kr, off + e);
        }
        const acc_t sc = block_sum(scratch, part);
        /* the first key sets the running maximum: no exp of -infinity anywhere */
        const acc_t m_new = j == 0 ? sc : FMAX(m, sc);
        const acc_t corr = j == 0 ? LIT(0.0) : EXP(m - m_new);
        const acc_t w = EXP(sc - m_new);
        total = total * corr + w;
        for (int r = 0; r < ATT_PER_THREAD; ++r) {
            const int e = t + r * BLOCK;
            if (e < HEAD_DIM) acc[r] = acc[r] * corr + w * LOAD(vr, off + e);
        }
        m = m_new;
    }
    const size_t o_off = (size_t)(bi * seq + i) * nh * HEAD_DIM + (size_t)hh * HEAD_DIM;
    for (int r = 0; r < ATT_PER_THREAD; ++r) {
        const int e = t + r * BLOCK;
        if (e < HEAD_DIM) STORE(out, o_off + e, acc[r] / total);
    }
}

/* Attention decode, flash-style: one block per (batch, head), the KV cache walked in tiles of BLOCK keys.
 *
 * q, out: [batch, heads, head_dim]; k, v: [batch, kv_heads, kv_len, head_dim]; head h reads KV head
 * h / group. Per tile each thread scores one key (its row of K read from global memory, q staged in
 * shared memory); block reductions give the tile's maximum and sum, folded into the running ones
 * (online softmax: earlier work rescaled by alpha = exp(m_old - m_new)); then each thread accumulates
 * p v for its output columns, THREAD_X + BLOCK * c, in registers (coalesced reads of V rows).
 * Shared memory is O(BLOCK + DMAX) whatever kv_len is. head_dim <= DMAX (the builder refuses larger).
 */
#include "wb_reduce.h"

#define COLS_PER_THREAD ((DMAX + BLOCK - 1) / BLOCK)
#define LOWEST LIT(-3.0e38)

KERNEL void attention_decode_flash(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k,
                                   const GLOBAL real* RESTRICT v, GLOBAL real* RESTRICT out,
                                   int heads, int kv_heads, int kv_len, int head_dim)
{
    SHARED acc_t qs[DMAX];
    SHARED acc_t p[BLOCK];
    SHARED acc_t red[BLOCK];

    const int tid = THREAD_X;
    const int bh = BLOCK_X;                        /* batch * heads + head */
    const int b = bh / heads, h = bh % heads;
    const int kvh = h / (heads / kv_heads);
    const GLOBAL real* kh = k + ((size_t)b * kv_heads + kvh) * kv_len * head_dim;
    const GLOBAL real* vh = v + ((size_t)b * kv_heads + kvh) * kv_len * head_dim;
    const acc_t scale = LIT(1.0) / SQRT((acc_t)head_dim);

    for (int c = tid; c < head_dim; c += BLOCK) qs[c] = LOAD(q, (size_t)bh * head_dim + c) * scale;
    BARRIER;

    acc_t acc[COLS_PER_THREAD];
    for (int c = 0; c < COLS_PER_THREAD; ++c) acc[c] = LIT(0.0);
    acc_t m = LOWEST, l = LIT(0.0);                /* the same in every thread (from block reductions) */
    for (int j0 = 0; j0 < kv_len; j0 += BLOCK) {
        const int j = j0 + tid;
        acc_t score = LOWEST;
        if (j < kv_len) {
            score = LIT(0.0);
            for (int c = 0; c < head_dim; ++c) score += qs[c] * LOAD(kh, (size_t)j * head_dim + c);
        }
        const acc_t mx = FMAX(m, block_max(red, score));
        const acc_t a = EXP(m - mx);
        const acc_t e = j < kv_len ? EXP(score - mx) : LIT(0.0);
        p[tid] = e;
        l = l * a + block_sum(red, e);             /* its barriers also publish p[] */
        m = mx;
        const int n = (kv_len - j0 < BLOCK ? kv_len - j0 : BLOCK);
        for (int c = 0; c < COLS_PER_THREAD; ++c) {
            const int col = tid + BLOCK * c;
            acc_t sum = acc[c] * a;
            if (col < head_dim)
                for (int jj = 0; jj < n; ++jj) sum += p[jj] * LOAD(vh, (size_t)(j0 + jj) * head_dim + col);
            acc[c] = sum;
        }
        BARRIER;                                   /* p[] is rewritten by the next tile */
    }
    const acc_t inv = LIT(1.0) / l;
    for (int c = 0; c < COLS_PER_THREAD; ++c) {
        const int col = tid + BLOCK * c;
        if (col < head_dim) STORE(out, (size_t)bh * head_dim + col, acc[c] * inv);
    }
}

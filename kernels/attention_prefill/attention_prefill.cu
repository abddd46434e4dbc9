/* Causal attention prefill, flash-style: one block per (BQ queries, batch x head), tiled online softmax.
 *
 * q, out: [batch, heads, seq, head_dim]; k, v: [batch, kv_heads, seq, head_dim]; query head h reads
 * KV head h / group. The block walks key tiles of BK up to its last query (causal: tiles above the
 * diagonal are skipped). Per tile: K and V are staged in shared memory; each of the BQ x BK scores is
 * a dot product (q from global memory, cached); one thread per query row folds its scores into the
 * running maximum and sum (rescale factor alpha); then every thread scales and accumulates its share
 * of the BQ x head_dim output, DMAX / (BLOCK / BQ) registers, owning columns THREADS_PER_ROW apart.
 * The seq x seq scores never exist; shared memory is O(BK x DMAX), registers O(DMAX x BQ / BLOCK).
 * head_dim <= DMAX (the builder refuses larger ones).
 */
#if BLOCK % BQ != 0
#error "BLOCK must be a multiple of BQ"
#endif
#define THREADS_PER_ROW (BLOCK / BQ)
#define COLS_PER_THREAD ((DMAX + THREADS_PER_ROW - 1) / THREADS_PER_ROW)
#define LOWEST LIT(-3.0e38)

KERNEL void attention_prefill_flash(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k,
                                    const GLOBAL real* RESTRICT v, GLOBAL real* RESTRICT out,
                                    int heads, int kv_heads, int seq, int head_dim)
{
    SHARED acc_t ks[BK][DMAX];
    SHARED acc_t vs[BK][DMAX];
    SHARED acc_t s[BQ][BK];
    SHARED acc_t m[BQ];
    SHARED acc_t l[BQ];
    SHARED acc_t alpha[BQ];

    const int tid = THREAD_X;
    const int i0 = BLOCK_X * BQ;
    const int bh = BLOCK_Y;                       /* batch * heads + head */
    const int b = bh / heads, h = bh % heads;
    const int kvh = h / (heads / kv_heads);
    const GLOBAL real* qh = q + (size_t)bh * seq * head_dim;
    const GLOBAL real* kh = k + ((size_t)b * kv_heads + kvh) * seq * head_dim;
    const GLOBAL real* vh = v + ((size_t)b * kv_heads + kvh) * seq * head_dim;
    const acc_t scale = LIT(1.0) / SQRT((acc_t)head_dim);

    const int row = tid / THREADS_PER_ROW;        /* the output row this thread accumulates */
    const int col0 = tid % THREADS_PER_ROW;       /* its columns: col0 + THREADS_PER_ROW * c */
    acc_t acc[COLS_PER_THREAD];
    for (int c = 0; c < COLS_PER_THREAD; ++c) acc[c] = LIT(0.0);
    if (tid < BQ) { m[tid] = LOWEST; l[tid] = LIT(0.0); }

    const int last = (i0 + BQ < seq ? i0 + BQ : seq);   /* keys 0 .. last-1 can be seen by this block */
    for (int j0 = 0; j0 < last; j0 += BK) {
        for (int e = tid; e < BK * DMAX; e += BLOCK) {  /* stage the K and V tiles (zero past the end) */
            const int jj = e / DMAX, c = e % DMAX;
            const int ok = (j0 + jj < seq) && (c < head_dim);
            ks[jj][c] = ok ? LOAD(kh, (size_t)(j0 + jj) * head_dim + c) : LIT(0.0);
            vs[jj][c] = ok ? LOAD(vh, (size_t)(j0 + jj) * head_dim + c) : LIT(0.0);
        }
        BARRIER;
        for (int e = tid; e < BQ * BK; e += BLOCK) {    /* scores of the tile; future keys left out */
            const int r = e / BK, jj = e % BK;
            const int i = i0 + r, j = j0 + jj;
            acc_t dot = LOWEST;
            if (i < seq && j <= i) {
                dot = LIT(0.0);
                for (int c = 0; c < head_dim; ++c) dot += LOAD(qh, (size_t)i * head_dim + c) * ks[jj][c];
                dot *= scale;
            }
            s[r][jj] = dot;
        }
        BARRIER;
        if (tid < BQ) {                                 /* online softmax, one thread per query row */
            const int i = i0 + tid;
            const int n = (i - j0 + 1 < BK ? i - j0 + 1 : BK);   /* visible keys of this tile */
            acc_t mx = m[tid];
            for (int jj = 0; jj < n; ++jj) mx = FMAX(mx, s[tid][jj]);
            const acc_t a = EXP(m[tid] - mx);
            acc_t sum = LIT(0.0);
            for (int jj = 0; jj < BK; ++jj) {
                const acc_t p = (jj < n && i < seq) ? EXP(s[tid][jj] - mx) : LIT(0.0);
                s[tid][jj] = p;
                sum += p;
            }
            m[tid] = mx;
            l[tid] = l[tid] * a + sum;
            alpha[tid] = a;
        }
        BARRIER;
        const acc_t a = alpha[row];                     /* rescale, then add this tile's p v */
        for (int c = 0; c < COLS_PER_THREAD; ++c) acc[c] *= a;
        for (int jj = 0; jj < BK; ++jj) {
            const acc_t p = s[row][jj];
            for (int c = 0; c < COLS_PER_THREAD; ++c) {
                const int col = col0 + THREADS_PER_ROW * c;
                if (col < DMAX) acc[c] += p * vs[jj][col];
            }
        }
        BARRIER;                                        /* the tiles are overwritten next */
    }
    const int i = i0 + row;
    if (i < seq) {
        const acc_t inv = LIT(1.0) / l[row];
        for (int c = 0; c < COLS_PER_THREAD; ++c) {
            const int col = col0 + THREADS_PER_ROW * c;
            if (col < head_dim) STORE(out, ((size_t)bh * seq + i) * head_dim + col, acc[c] * inv);
        }
    }
}

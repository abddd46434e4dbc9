/* The RoPE loop both layouts share (kernels/rope, kernels/rope_interleaved): a grid-stride loop over the
   tokens * (heads + kv_heads) * pairs pairs (pairs = head_dim / 2); pair i of a head is (i * step,
   i * step + partner): step 1, partner pairs for the half-split layout, step 2, partner 1 interleaved. */
DEVICE_FN void wb_rope_pairs(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k,
                             const GLOBAL real* RESTRICT cosv, const GLOBAL real* RESTRICT sinv,
                             GLOBAL real* RESTRICT q_out, GLOBAL real* RESTRICT k_out,
                             int heads, int kv_heads, int pairs, int n, int step, int partner)
{
    const int all_heads = heads + kv_heads;
    for (int g = BLOCK_X * BLOCK_DIM_X + THREAD_X; g < n; g += GRID_DIM_X * BLOCK_DIM_X) {
        const int i = g % pairs;
        const int th = g / pairs;
        const int t = th / all_heads;
        const int h = th - t * all_heads;
        const acc_t c = LOAD(cosv, (i64)t * pairs + i);
        const acc_t s = LOAD(sinv, (i64)t * pairs + i);
        const int is_q = h < heads;
        const i64 row = is_q ? (i64)t * heads + h : (i64)t * kv_heads + (h - heads);
        const i64 a_at = row * 2 * pairs + (i64)i * step;
        const i64 b_at = a_at + partner;
        const GLOBAL real* x = is_q ? q : k;
        GLOBAL real* o = is_q ? q_out : k_out;
        const acc_t a = LOAD(x, a_at);
        const acc_t b = LOAD(x, b_at);
        STORE(o, a_at, a * c - b * s);
        STORE(o, b_at, b * c + a * s);
    }
}

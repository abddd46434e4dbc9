/* argmax of each row (int64 index): one block per row.
 *
 * Matches numpy: the lowest index among equal maxima, and a NaN counts as the
 * maximum (the first NaN wins). Each thread scans its strided columns in
 * increasing order, then a shared-memory tree merges (value, index) pairs with
 * the same rule. ARGMAX_NONE marks a thread that saw no column (cols < BLOCK).
 */
#define ARGMAX_NONE 0x7fffffff

/* Does (v, i) beat the current best (bv, bi)? */
DEVICE_FN int argmax_better(acc_t v, int i, acc_t bv, int bi)
{
    if (i == ARGMAX_NONE) return 0;
    if (bi == ARGMAX_NONE) return 1;
    if (v != v) return bv == bv || i < bi;  /* v is NaN */
    if (bv != bv) return 0;
    return v > bv || (v == bv && i < bi);
}

KERNEL void argmax_rows(const GLOBAL real* RESTRICT x, GLOBAL i64* RESTRICT out, int rows, int cols)
{
    SHARED acc_t vals[BLOCK];
    SHARED int idxs[BLOCK];
    const int t = THREAD_X, row = BLOCK_X;
    if (row >= rows) return;
    const GLOBAL real* xr = x + (size_t)row * cols;

    acc_t bv = LIT(0.0);
    int bi = ARGMAX_NONE;
    for (int c = t; c < cols; c += BLOCK_DIM_X) {
        const acc_t v = LOAD(xr, c);
        if (argmax_better(v, c, bv, bi)) { bv = v; bi = c; }
    }
    vals[t] = bv;
    idxs[t] = bi;
    BARRIER;
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s && argmax_better(vals[t + s], idxs[t + s], vals[t], idxs[t])) {
            vals[t] = vals[t + s];
            idxs[t] = idxs[t + s];
        }
        BARRIER;
    }
    if (t == 0) out[row] = (i64)idxs[0];
}

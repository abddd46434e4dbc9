/* layernorm over each row: one block per row. Mean first, then the variance
 * around it (two passes: no cancellation from E[x^2] - E[x]^2). EPS is #defined at build. */
#include "wb_reduce.h"

KERNEL void layernorm_rows(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT weight,
                           const GLOBAL real* RESTRICT bias, GLOBAL real* RESTRICT out, int rows, int cols)
{
    SHARED acc_t scratch[BLOCK];
    const int row = BLOCK_X;
    if (row >= rows) return;
    const GLOBAL real* xr = x + (size_t)row * cols;
    GLOBAL real* outr = out + (size_t)row * cols;

    acc_t s = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) s += LOAD(xr, c);
    const acc_t mean = block_sum(scratch, s) / (acc_t)cols;

    acc_t q = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) {
        const acc_t d = LOAD(xr, c) - mean;
        q += d * d;
    }
    const acc_t rstd = RSQRT(block_sum(scratch, q) / (acc_t)cols + (acc_t)EPS);

    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X)
        STORE(outr, c, (LOAD(xr, c) - mean) * rstd * LOAD(weight, c) + LOAD(bias, c));
}

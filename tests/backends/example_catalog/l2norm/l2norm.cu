/* l2norm over each row: out = x * rsqrt(sum(x^2) + EPS); one block per row. */
#ifndef L2NORM_CU
#define L2NORM_CU
#include "wb_reduce.h"

KERNEL void l2norm_rows(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int rows, int cols)
{
    SHARED acc_t scratch[BLOCK];
    const int row = BLOCK_X;
    if (row >= rows) return;
    const GLOBAL real* xr = x + (size_t)row * cols;
    GLOBAL real* outr = out + (size_t)row * cols;

    acc_t q = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) {
        const acc_t v = LOAD(xr, c);
        q += v * v;
    }
    const acc_t inv = RSQRT(block_sum(scratch, q) + (acc_t)EPS);

    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) STORE(outr, c, LOAD(xr, c) * inv);
}

#endif

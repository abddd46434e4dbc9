/* softmax over each row: one block per row, BLOCK threads stride over the columns.
 * Three passes over the row (max, sum of exp, write); the row is re-read from cache.
 * Tree reductions in shared memory (wb_reduce.h), any number of columns.
 */
#include "wb_reduce.h"

KERNEL void softmax_rows(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int rows, int cols)
{
    SHARED acc_t scratch[BLOCK];
    const int row = BLOCK_X;
    if (row >= rows) return;  /* uniform per block: no barrier is skipped by part of it */
    const GLOBAL real* xr = x + (size_t)row * cols;
    GLOBAL real* outr = out + (size_t)row * cols;

    acc_t m = LOAD(xr, 0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) m = FMAX(m, LOAD(xr, c));
    m = block_max(scratch, m);

    acc_t s = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) s += EXP(LOAD(xr, c) - m);
    const acc_t inv = LIT(1.0) / block_sum(scratch, s);

    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) STORE(outr, c, EXP(LOAD(xr, c) - m) * inv);
}

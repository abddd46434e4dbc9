/* sum: out[0] = sum(x), two passes.
 *
 * Pass 1 (sum_partials): a grid of G blocks strides over x; each thread adds a
 * few elements, the block tree-reduces, and block b writes partial[b].
 * Pass 2 (sum_final): one block reduces the G partials the same way.
 * Accumulation is in acc_t (float for float16/float32); the grid size keeps
 * each thread's sequential run short, so the error stays that of a tree.
 */
#include "wb_reduce.h"

KERNEL void sum_partials(const GLOBAL real* RESTRICT x, GLOBAL acc_t* RESTRICT partial, int n)
{
    SHARED acc_t scratch[BLOCK];
    acc_t s = LIT(0.0);
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) s += LOAD(x, i);
    s = block_sum(scratch, s);
    if (THREAD_X == 0) partial[BLOCK_X] = s;
}

KERNEL void sum_final(const GLOBAL acc_t* RESTRICT partial, GLOBAL real* RESTRICT out, int count)
{
    SHARED acc_t scratch[BLOCK];
    acc_t s = LIT(0.0);
    for (int i = THREAD_X; i < count; i += BLOCK_DIM_X) s += partial[i];
    s = block_sum(scratch, s);
    if (THREAD_X == 0) STORE(out, 0, s);
}

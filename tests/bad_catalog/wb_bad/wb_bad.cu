/* wb_bad: out = a + b, and two out-of-bounds kernels for the isolation tests. */
KERNEL void wb_good(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, LOAD(a, i) + LOAD(b, i));
}

/* Reads 64M elements past the end of `a`. */
KERNEL void wb_read_far(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                        int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, LOAD(a, i + (n > 1 ? 67108864 : 0)) + LOAD(b, i));
}

/* Right answer, plus one element written past the end of `out` (an off-by-one bound). */
KERNEL void wb_one_past(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                        int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i <= n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, LOAD(a, i < n ? i : 0) + LOAD(b, i < n ? i : 0));
}

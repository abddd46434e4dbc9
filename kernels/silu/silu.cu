/* silu: out = x / (1 + exp(-x)). For very negative x, exp(-x) overflows to inf and the result is -0. */
KERNEL void silu(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t v = LOAD(x, i);
        STORE(out, i, v / (LIT(1.0) + EXP(-v)));
    }
}

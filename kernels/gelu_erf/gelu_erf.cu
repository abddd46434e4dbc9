/* gelu_erf: out = 0.5 x (1 + erf(x / sqrt 2)), the exact GELU. */
KERNEL void gelu_erf(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t v = LOAD(x, i);
        STORE(out, i, LIT(0.5) * v * (LIT(1.0) + ERF(v * LIT(0.7071067811865476))));
    }
}

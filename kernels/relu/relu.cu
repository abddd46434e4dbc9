/* relu: out = max(x, 0). A comparison, not FMAX: fmax(NaN, 0) is 0, numpy's maximum propagates NaN. */
KERNEL void relu(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t v = LOAD(x, i);
        STORE(out, i, v < LIT(0.0) ? LIT(0.0) : v);
    }
}

/* swiglu: out = gate / (1 + exp(-gate)) * up. For very negative gate, exp(-gate) overflows to inf: -0 * up. */
KERNEL void swiglu(const GLOBAL real* RESTRICT gate, const GLOBAL real* RESTRICT up, GLOBAL real* RESTRICT out,
                   int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t g = LOAD(gate, i);
        STORE(out, i, g / (LIT(1.0) + EXP(-g)) * LOAD(up, i));
    }
}

/* geglu: out = 0.5 gate (1 + erf(gate / sqrt 2)) * up, the exact GELU times the up projection. */
KERNEL void geglu(const GLOBAL real* RESTRICT gate, const GLOBAL real* RESTRICT up, GLOBAL real* RESTRICT out,
                  int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t g = LOAD(gate, i);
        STORE(out, i, LIT(0.5) * g * (LIT(1.0) + ERF(g * LIT(0.7071067811865476))) * LOAD(up, i));
    }
}

/* saxpy: out = alpha * x + y. One grid-stride loop: any n, any grid size. */
KERNEL void saxpy(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT y, GLOBAL real* RESTRICT out,
                  acc_t alpha, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, alpha * LOAD(x, i) + LOAD(y, i));
}

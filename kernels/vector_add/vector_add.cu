/* vector_add: out = a + b, grid-stride over n. (Also the first step of unfused rmsnorm_residual.) */
#ifndef VECTOR_ADD_CU
#define VECTOR_ADD_CU

KERNEL void vector_add(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                       int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, LOAD(a, i) + LOAD(b, i));
}

#endif

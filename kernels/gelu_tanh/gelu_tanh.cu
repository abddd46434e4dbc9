/* gelu_tanh: out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
#ifndef GELU_TANH_CU
#define GELU_TANH_CU

DEVICE_FN acc_t gelu_tanh_of(acc_t v)
{
    const acc_t inner = LIT(0.7978845608028654) * (v + LIT(0.044715) * v * v * v);
    return LIT(0.5) * v * (LIT(1.0) + TANH(inner));
}

KERNEL void gelu_tanh(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, gelu_tanh_of(LOAD(x, i)));
}

#endif

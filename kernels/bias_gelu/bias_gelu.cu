/* bias_gelu: out = gelu_tanh(x + bias[col]).
 *
 * Fused: one kernel, x + bias never leaves registers.
 * Unfused: bias_add materialises h = x + bias in the run dtype (as a framework
 * would), then the gelu_tanh kernel from kernels/gelu_tanh reads it back.
 */
#include "../gelu_tanh/gelu_tanh.cu"

KERNEL void bias_gelu_fused(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT bias,
                            GLOBAL real* RESTRICT out, int rows, int cols)
{
    const int n = rows * cols;
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, gelu_tanh_of(LOAD(x, i) + LOAD(bias, i % cols)));
}

KERNEL void bias_add(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT bias, GLOBAL real* RESTRICT h,
                     int rows, int cols)
{
    const int n = rows * cols;
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(h, i, LOAD(x, i) + LOAD(bias, i % cols));
}

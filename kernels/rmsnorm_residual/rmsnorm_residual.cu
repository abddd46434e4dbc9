/* rmsnorm_residual: residual_out = x + residual; out = rmsnorm(residual_out) * weight.
 *
 * Fused: one block per row reads x and residual once, writes residual_out,
 * and normalises from what it wrote (each thread re-reads only its own
 * elements, so no barrier is needed for them).
 * Unfused: the vector_add kernel, then the rmsnorm kernel, both included
 * unchanged from their own folders.
 */
#include "../vector_add/vector_add.cu"
#include "../rmsnorm/rmsnorm.cu"

KERNEL void rmsnorm_residual_fused(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT residual,
                                   const GLOBAL real* RESTRICT weight, GLOBAL real* RESTRICT out,
                                   GLOBAL real* RESTRICT residual_out, int rows, int cols)
{
    SHARED acc_t scratch[BLOCK];
    const int row = BLOCK_X;
    if (row >= rows) return;
    const size_t base = (size_t)row * cols;

    acc_t q = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) {
        STORE(residual_out, base + c, LOAD(x, base + c) + LOAD(residual, base + c));
        const acc_t h = LOAD(residual_out, base + c);  /* as stored: what the next layer will see */
        q += h * h;
    }
    const acc_t rstd = RSQRT(block_sum(scratch, q) / (acc_t)cols + (acc_t)EPS);

    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X)
        STORE(out, base + c, LOAD(residual_out, base + c) * rstd * LOAD(weight, c));
}

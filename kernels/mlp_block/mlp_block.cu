/* The decoder MLP block's kernels, for its eager and graph device plans (workbench.execution.device_plan).
 *
 * rmsnorm_rows (the catalog's rmsnorm kernel) and gemm_tiled (the catalog's tiled GEMM) are included
 * as they are; the block adds the SwiGLU activation and the residual add. Each is its own launch, so
 * eager and graph run exactly the same kernels and differ only in how they are launched.
 */
#ifndef MLP_BLOCK_CU
#define MLP_BLOCK_CU
#ifndef EPS
#define EPS 1e-6
#endif
#ifndef TILE
#define TILE 16
#endif
#include "../rmsnorm/rmsnorm.cu"
#include "../gemm/gemm.cu"

/* h[i] = silu(gate[i]) * up[i] over n elements (grid-stride). */
KERNEL void swiglu(const GLOBAL real* RESTRICT gate, const GLOBAL real* RESTRICT up, GLOBAL real* RESTRICT h, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X) {
        const acc_t g = LOAD(gate, i);
        STORE(h, i, g / (LIT(1.0) + EXP(-g)) * LOAD(up, i));
    }
}

/* out[i] = a[i] + b[i] over n elements (grid-stride): the residual add. */
KERNEL void residual_add(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                         int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, LOAD(a, i) + LOAD(b, i));
}
#endif

/* gemm_int8: out[r, j] = scale[j] * sum_i x[r, i] * w[j, i], w int8 [n, k] (nn.Linear layout).
   One thread per output: x along threadIdx.x would re-read w; instead x runs over channels j (w rows,
   each walked by one thread, cached) and y over rows r; the k loop converts each int8 code to acc_t.
   The scale multiplies the finished sum (one rounding instead of k). */
KERNEL void gemm_int8(const GLOBAL real* RESTRICT x, const GLOBAL signed char* RESTRICT w,
                      const GLOBAL real* RESTRICT scale, GLOBAL real* RESTRICT out, int m, int n, int k)
{
    const int j = BLOCK_X * BLOCK_DIM_X + THREAD_X;
    const int r = BLOCK_Y * BLOCK_DIM_Y + THREAD_Y;
    if (j >= n || r >= m)
        return;
    const GLOBAL signed char* wj = w + (i64)j * k;
    const i64 xr = (i64)r * k;
    acc_t acc = LIT(0.0);
    for (int i = 0; i < k; ++i)
        acc += LOAD(x, xr + i) * (acc_t)wj[i];
    STORE(out, (i64)r * n + j, acc * LOAD(scale, j));
}

/* gemm_int8_gemv: the decode form (m small). One block per output channel j: its BLOCK threads stride
   along k (coalesced reads of the int8 row and of x), then a shared-memory tree sum per row r of x; the
   int8 row stays in cache across the m rows. */
#include "wb_reduce.h"

KERNEL void gemm_int8_gemv(const GLOBAL real* RESTRICT x, const GLOBAL signed char* RESTRICT w,
                           const GLOBAL real* RESTRICT scale, GLOBAL real* RESTRICT out, int m, int n, int k)
{
    SHARED acc_t scratch[BLOCK];
    const int j = BLOCK_X;
    if (j >= n)
        return;
    const GLOBAL signed char* wj = w + (i64)j * k;
    const acc_t s = LOAD(scale, j);
    for (int r = 0; r < m; ++r) {
        const i64 xr = (i64)r * k;
        acc_t acc = LIT(0.0);
        for (int i = THREAD_X; i < k; i += BLOCK_DIM_X)
            acc += LOAD(x, xr + i) * (acc_t)wj[i];
        acc = block_sum(scratch, acc);
        if (THREAD_X == 0)
            STORE(out, (i64)r * n + j, acc * s);
    }
}

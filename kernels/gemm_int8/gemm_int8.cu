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

/* gemm: out[m, n] = a[m, k] @ b[k, n], row-major, accumulating in acc_t.
 *
 * Naive: one thread per output, k loads of a and b each from global memory.
 * Tiled: the block (TILE x TILE threads) stages TILE x TILE tiles of a and b
 * in shared memory, so each global element is loaded once per block instead
 * of once per thread. Edge tiles are zero-filled, so m, n and k need not be
 * multiples of TILE.
 */
KERNEL void gemm_naive(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                       int m, int n, int k)
{
    const int col = BLOCK_X * BLOCK_DIM_X + THREAD_X;
    const int row = BLOCK_Y * BLOCK_DIM_Y + THREAD_Y;
    if (row >= m || col >= n) return;
    acc_t s = LIT(0.0);
    for (int p = 0; p < k; ++p) s += LOAD(a, (size_t)row * k + p) * LOAD(b, (size_t)p * n + col);
    STORE(out, (size_t)row * n + col, s);
}

KERNEL void gemm_tiled(const GLOBAL real* RESTRICT a, const GLOBAL real* RESTRICT b, GLOBAL real* RESTRICT out,
                       int m, int n, int k)
{
    SHARED acc_t as[TILE][TILE];
    SHARED acc_t bs[TILE][TILE];
    const int tx = THREAD_X, ty = THREAD_Y;
    const int row = BLOCK_Y * TILE + ty, col = BLOCK_X * TILE + tx;

    acc_t s = LIT(0.0);
    for (int k0 = 0; k0 < k; k0 += TILE) {
        as[ty][tx] = (row < m && k0 + tx < k) ? LOAD(a, (size_t)row * k + k0 + tx) : LIT(0.0);
        bs[ty][tx] = (k0 + ty < k && col < n) ? LOAD(b, (size_t)(k0 + ty) * n + col) : LIT(0.0);
        BARRIER;
        for (int p = 0; p < TILE; ++p) s += as[ty][p] * bs[p][tx];
        BARRIER;
    }
    if (row < m && col < n) STORE(out, (size_t)row * n + col, s);
}

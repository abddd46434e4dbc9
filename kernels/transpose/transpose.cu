/* transpose: out[c, r] = x[r, c].
 *
 * Naive: one thread per element; reads are coalesced, writes stride by rows.
 * Tiled: a TILE x TILE block is staged in shared memory so both the read and
 * the write touch contiguous runs. The tile row is padded to TILE + 1 so the
 * column-wise reads of the second phase fall in different banks. The block is
 * TILE x TILE_ROWS threads; each thread moves TILE / TILE_ROWS elements.
 */
#if TILE % TILE_ROWS != 0
#error "TILE must be a multiple of TILE_ROWS"
#endif

KERNEL void transpose_naive(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int rows, int cols)
{
    const int c = BLOCK_X * BLOCK_DIM_X + THREAD_X;
    const int r = BLOCK_Y * BLOCK_DIM_Y + THREAD_Y;
    if (r < rows && c < cols) STORE(out, (size_t)c * rows + r, LOAD(x, (size_t)r * cols + c));
}

KERNEL void transpose_tiled(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int rows, int cols)
{
    SHARED acc_t tile[TILE][TILE + 1];
    const int tx = THREAD_X, ty = THREAD_Y;
    const int r0 = BLOCK_Y * TILE, c0 = BLOCK_X * TILE;

    for (int j = ty; j < TILE; j += TILE_ROWS) {
        const int r = r0 + j, c = c0 + tx;
        if (r < rows && c < cols) tile[j][tx] = LOAD(x, (size_t)r * cols + c);
    }
    BARRIER;
    for (int j = ty; j < TILE; j += TILE_ROWS) {
        const int c = c0 + j, r = r0 + tx;  /* out row c, out column r */
        if (c < cols && r < rows) STORE(out, (size_t)c * rows + r, tile[tx][j]);
    }
}

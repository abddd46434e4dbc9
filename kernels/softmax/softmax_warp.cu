/* softmax over each row with warp-shuffle reductions: CUDA and HIP only (not portable).
 *
 * WARP_SIZE comes from the device at build time (32 on NVIDIA, 64 on most AMD
 * GPUs) and FULL_MASK / SHFL_XOR from the prelude (32-bit mask on CUDA,
 * 64-bit on HIP): nothing here assumes a warp width.
 */
#if !defined(WB_TARGET_CUDA) && !defined(WB_TARGET_HIP)
#error "softmax_warp.cu uses warp shuffles: it builds for CUDA and HIP only"
#endif
#ifndef WARP_SIZE
#error "WARP_SIZE must be defined at build time from the device's warp size"
#endif
#if BLOCK % WARP_SIZE != 0 || BLOCK / WARP_SIZE > WARP_SIZE
#error "BLOCK must be a multiple of WARP_SIZE and at most WARP_SIZE * WARP_SIZE"
#endif
#define NWARPS (BLOCK / WARP_SIZE)

DEVICE_FN acc_t warp_sum(acc_t v)
{
    for (int o = WARP_SIZE / 2; o > 0; o >>= 1) v += SHFL_XOR(v, o);
    return v;
}

DEVICE_FN acc_t warp_max(acc_t v)
{
    for (int o = WARP_SIZE / 2; o > 0; o >>= 1) v = FMAX(v, SHFL_XOR(v, o));
    return v;
}

/* Each warp reduces, lane 0 posts to shared memory, then every warp reduces the posts:
 * all threads get the result without a broadcast step. */
DEVICE_FN acc_t block_sum_warps(SHARED_PTR acc_t* post, acc_t v)
{
    const int lane = THREAD_X % WARP_SIZE, warp = THREAD_X / WARP_SIZE;
    v = warp_sum(v);
    if (lane == 0) post[warp] = v;
    BARRIER;
    v = warp_sum(lane < NWARPS ? post[lane] : LIT(0.0));
    BARRIER;
    return v;
}

DEVICE_FN acc_t block_max_warps(SHARED_PTR acc_t* post, acc_t v)
{
    const int lane = THREAD_X % WARP_SIZE, warp = THREAD_X / WARP_SIZE;
    v = warp_max(v);
    if (lane == 0) post[warp] = v;
    BARRIER;
    v = warp_max(post[lane < NWARPS ? lane : 0]);
    BARRIER;
    return v;
}

KERNEL void softmax_rows_warp(const GLOBAL real* RESTRICT x, GLOBAL real* RESTRICT out, int rows, int cols)
{
    SHARED acc_t post[NWARPS];
    const int row = BLOCK_X;
    if (row >= rows) return;
    const GLOBAL real* xr = x + (size_t)row * cols;
    GLOBAL real* outr = out + (size_t)row * cols;

    acc_t m = LOAD(xr, 0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) m = FMAX(m, LOAD(xr, c));
    m = block_max_warps(post, m);

    acc_t s = LIT(0.0);
    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) s += EXP(LOAD(xr, c) - m);
    const acc_t inv = LIT(1.0) / block_sum_warps(post, s);

    for (int c = THREAD_X; c < cols; c += BLOCK_DIM_X) STORE(outr, c, EXP(LOAD(xr, c) - m) * inv);
}

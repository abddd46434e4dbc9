/* Block-wide tree reductions for portable kernels.
 *
 * The block has BLOCK threads (a power of two, #defined at build time) and
 * the caller passes a SHARED scratch array of BLOCK acc_t. Every thread of the
 * block must call these (they contain barriers) and every thread gets the
 * result. The trailing barrier lets the caller reuse the scratch at once.
 */
#ifndef WB_REDUCE_H
#define WB_REDUCE_H

#if (BLOCK & (BLOCK - 1)) != 0
#error "BLOCK must be a power of two for the tree reductions in wb_reduce.h"
#endif

DEVICE_FN acc_t block_sum(SHARED_PTR acc_t* buf, acc_t v)
{
    const int t = THREAD_X;
    buf[t] = v;
    BARRIER;
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        BARRIER;
    }
    const acc_t r = buf[0];
    BARRIER;
    return r;
}

DEVICE_FN acc_t block_max(SHARED_PTR acc_t* buf, acc_t v)
{
    const int t = THREAD_X;
    buf[t] = v;
    BARRIER;
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] = FMAX(buf[t], buf[t + s]);
        BARRIER;
    }
    const acc_t r = buf[0];
    BARRIER;
    return r;
}

#endif /* WB_REDUCE_H */

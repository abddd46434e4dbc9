/* rope_interleaved, pairs (2i, 2i + 1): the shared loop of wb_rope.h with step 2, partner 1. */
#include "wb_rope.h"

KERNEL void rope_interleaved(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k,
                             const GLOBAL real* RESTRICT cosv, const GLOBAL real* RESTRICT sinv,
                             GLOBAL real* RESTRICT q_out, GLOBAL real* RESTRICT k_out,
                             int heads, int kv_heads, int pairs, int n)
{
    wb_rope_pairs(q, k, cosv, sinv, q_out, k_out, heads, kv_heads, pairs, n, 2, 1);
}

/* rope, half-split pairs (i, i + head_dim / 2): the shared loop of wb_rope.h with step 1, partner pairs. */
#include "wb_rope.h"

KERNEL void rope_half(const GLOBAL real* RESTRICT q, const GLOBAL real* RESTRICT k, const GLOBAL real* RESTRICT cosv,
                      const GLOBAL real* RESTRICT sinv, GLOBAL real* RESTRICT q_out, GLOBAL real* RESTRICT k_out,
                      int heads, int kv_heads, int pairs, int n)
{
    wb_rope_pairs(q, k, cosv, sinv, q_out, k_out, heads, kv_heads, pairs, n, 1, pairs);
}

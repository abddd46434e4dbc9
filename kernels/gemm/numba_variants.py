"""gemm with numba: a naive -> tiled progression.

- ``numba-naive``: one dot product per output element (i, j, k order); every
  step of the k loop strides a whole row of b, so b is re-read from cache or
  memory m times.
- ``numba-tiled``: b is packed once per k-panel (KC rows) into contiguous
  column tiles of NB columns (zero padded); row blocks of a go to the cores;
  an MR x NB block of C is accumulated in a small buffer that stays in L1
  while the k-panel streams through, and each b element loaded from the
  packed tile feeds MR fused multiply-adds. The inner loop vectorizes over NB.
  This is the BLIS/GotoBLAS structure without the register-blocked assembly
  micro-kernel, so it reaches a fraction of BLAS, not parity.

The tile sizes NB, KC and MC are tunable (``workbench tune --kernel gemm
--variant numba-tiled``): the defaults were picked by hand on one 2-core Zen 5
(AVX-512); the best ones depend on the vector width and the cache sizes of the
CPU it runs on.
"""

import functools

from workbench.authoring.numba_support import per_config
from workbench.catalog import Tunable, kernel_here

MR = 4  # rows of C per micro-tile (each packed b value is reused MR times); the micro-kernel unrolls 4 rows
TUNABLES = (
    Tunable("NB", (64, 128, 256, 512), 256, "columns per packed b tile: the vectorized inner loop"),
    Tunable("KC", (64, 128, 256, 512), 256, "k-panel depth: rows of a packed b tile"),
    Tunable("MC", (16, 32, 64, 128), 64, "rows of `a` per parallel task"),
)
#: A packed KC x NB b tile of at most 128 Ki elements (512 KiB in float32) stays in a core's share of L2.
RESTRICTIONS = ("KC * NB <= 131072",)
op = kernel_here(__file__)


@op.numba("numba-naive")
def naive_kernel(t):
    """out[i, j] = dot(a[i, :], b[:, j]) per element, rows over the cores: b is walked by column."""
    from numba import njit, prange

    zero = t(0.0)

    @njit(parallel=True, fastmath=True)
    def naive(a, b, out):
        m, k = a.shape
        n = b.shape[1]
        for i in prange(m):
            for j in range(n):
                s = zero
                for p in range(k):
                    s += a[i, p] * b[p, j]
                out[i, j] = s
    return naive


@op.numba("numba-tiled", tunables=TUNABLES, restrictions=RESTRICTIONS)
def tiled_kernel(t, config):
    """Packed b panels, MR x NB accumulator tiles in L1, row blocks over the cores."""
    from numba import njit, prange

    from workbench.authoring.numba_math import line_empty

    zero = t(0.0)
    NB, KC, MC = config["NB"], config["KC"], config["MC"]  # closure constants: numba specializes on them
    named = functools.partial(per_config, config=config)

    @njit(fastmath=True)
    @named
    def pack(b, k0, kc, bp):
        """b[k0:k0+kc, :] -> bp[jb, p, :] (NB-wide column tiles, zero padded)."""
        n = b.shape[1]
        for jb in range(bp.shape[0]):
            j0 = jb * NB
            w = min(n, j0 + NB) - j0
            for p in range(kc):
                for j in range(w):
                    bp[jb, p, j] = b[k0 + p, j0 + j]
                for j in range(w, NB):
                    bp[jb, p, j] = zero

    @njit(fastmath=True)
    @named
    def row_block(a, bp, out, i0, i1, k0, kc, acc):
        """out[i0:i1, :] += a[i0:i1, k0:k0+kc] @ (packed panel)."""
        n = out.shape[1]
        for jb in range(bp.shape[0]):
            j0 = jb * NB
            w = min(n, j0 + NB) - j0
            bt = bp[jb]
            i = i0
            while i + MR <= i1:  # MR x NB micro-tile: each packed b value feeds MR FMAs
                for r in range(MR):
                    for j in range(NB):
                        acc[r, j] = zero
                for p in range(kc):
                    brow = bt[p]
                    a0 = a[i, k0 + p]
                    a1 = a[i + 1, k0 + p]
                    a2 = a[i + 2, k0 + p]
                    a3 = a[i + 3, k0 + p]
                    for j in range(NB):
                        bv = brow[j]
                        acc[0, j] += a0 * bv
                        acc[1, j] += a1 * bv
                        acc[2, j] += a2 * bv
                        acc[3, j] += a3 * bv
                for r in range(MR):
                    for j in range(w):
                        out[i + r, j0 + j] += acc[r, j]
                i += MR
            while i < i1:  # leftover rows of the block, one at a time
                for p in range(kc):
                    av = a[i, k0 + p]
                    brow = bt[p]
                    for j in range(w):
                        out[i, j0 + j] += av * brow[j]
                i += 1

    @njit(parallel=True, fastmath=True)
    @named
    def tiled(a, b, out):
        m, k = a.shape
        n = b.shape[1]
        for i in prange(m):
            for j in range(n):
                out[i, j] = zero
        nbi = (m + MC - 1) // MC
        nbj = (n + NB - 1) // NB
        bp = line_empty(nbj * KC * NB, t).reshape((nbj, KC, NB))  # rows on cache lines, in every process
        for k0 in range(0, k, KC):
            kc = min(k, k0 + KC) - k0
            pack(b, k0, kc, bp)
            for ib in prange(nbi):
                acc = line_empty(MR * NB, t).reshape((MR, NB))
                row_block(a, bp, out, ib * MC, min(m, ib * MC + MC), k0, kc, acc)

    return tiled

"""The machine's speed now: a fixed, cache-resident workload timed in a few tens of milliseconds.

A shared host drifts: on our 2-core VMs the same plain loop (``np.sin`` over 1M floats, 8 blocks of 0.2 s,
each run within 3.7% of itself) read 384, 382, 397 and 399 us in four probes two minutes apart, and every
cell of a quick suite run in between moved with it (rmsnorm, rope and swiglu cells 5-7% slower in the second
of two back-to-back runs, each known to ±1%). No cell can see that drift alone; this probe, taken before every
round in the sweep's process while its workers wait, does. Each row keeps its rounds' probes beside their
medians (``round_probes_s``), so ``compare`` can judge two runs of one machine at the same speed and says by
how much the machine's speed moved between them.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

#: Elements of the probe's array: float32, 64 KiB, in every core's L2.
PROBE_ELEMENTS = 1 << 14
#: Blocks of the probe, and the seconds it takes in all.
PROBE_BLOCKS = 7
PROBE_S = 0.03


def speed_probe_s(seconds: float = PROBE_S, blocks: int = PROBE_BLOCKS) -> float:
    """Seconds one call of the probe takes now: the median over ``blocks`` blocks of each block's fastest call
    (a call stretched by another process only ever gains time; the median of blocks then drops a disturbed
    block)."""
    x = np.linspace(0.0, 1.0, PROBE_ELEMENTS, dtype=np.float32)
    out = np.empty_like(x)
    np.sin(x, out=out)  # the first call pays for the pages and the ufunc's set-up
    per_block = seconds / blocks
    fastest = []
    for _ in range(blocks):
        best = float("inf")
        end = time.perf_counter() + per_block
        while True:
            t0 = time.perf_counter()
            np.sin(x, out=out)
            t = time.perf_counter() - t0
            best = min(best, t)
            if t0 + t >= end:
                break
        fastest.append(best)
    return statistics.median(fastest)

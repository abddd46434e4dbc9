"""How hard a GPU visit tries, apart from a CPU cell's budget: the knobs of :mod:`workbench.measure.gpu_visit`.

A CPU figure (10 ms warm-up, 40 ms budget in the quick suite) gave the H100's large cells 9 samples in all, each
round's first samples on a clock still ramping. The defaults follow the field: ``triton.testing.do_bench``
warms up 25 ms and repeats for 100 ms; nvbench runs at least 0.5 s and drops samples below 75% of the SM clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuBudget:
    """A GPU visit's own budget; CPU backends never read it."""

    #: Samples a GPU visit (one round of a cell) takes at least: never 9 for a cell.
    min_samples: int = 10
    #: Device seconds a visit's samples add up to at least (do_bench repeats for 100 ms).
    min_device_s: float = 0.1
    #: Device-busy seconds the clock warm-up may spend reaching :attr:`clock_fraction` of the maximum SM clock
    #: (an idle MI300 ramps for >= 400 ms: ROCm/composable_kernel PR #1241).
    clock_warmup_limit_s: float = 1.0
    #: Samples are timed at >= this share of the device's maximum SM clock; slower ones are dropped and counted.
    clock_fraction: float = 0.9
    #: Seconds of the cell's calls repeated to read joules per call from the energy counter (first round);
    #: 0: no energy reading.
    energy_s: float = 1.0

    def __post_init__(self) -> None:
        if self.min_samples < 1:
            raise ValueError(f"GPU min_samples must be at least 1, got {self.min_samples}")
        for name in ("min_device_s", "clock_warmup_limit_s", "energy_s"):
            v = getattr(self, name)
            if not (0 <= v < math.inf):
                raise ValueError(f"GPU {name} must be finite and >= 0, got {v!r}")
        if not 0 < self.clock_fraction <= 1:
            raise ValueError(f"GPU clock_fraction must be in (0, 1], got {self.clock_fraction!r}")


#: The quick suite's GPU visits: fewer device seconds than the standard suite's, never fewer than 10 samples,
#: and no energy reading (a second per cell would double a quick run).
QUICK_GPU = GpuBudget(min_samples=10, min_device_s=0.025, clock_warmup_limit_s=0.5, energy_s=0.0)

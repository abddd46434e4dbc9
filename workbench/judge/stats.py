"""Summary statistics of timing samples.

The median and quartiles are what the workbench reports: a few slow samples
(an interrupt, a page fault, another process) move the mean but not the
median, and ``iqr / median`` is the spread the adaptive loop drives down.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Stats:
    n: int
    median: float
    mean: float
    min: float
    q1: float
    q3: float
    iqr: float
    rel_spread: float  # iqr / median; inf for a zero median, nan without samples

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def summarize(samples: Iterable[float]) -> Stats:
    """Median, mean, min and quartiles (linear interpolation, numpy's default) of ``samples``."""
    a = np.asarray(list(samples), dtype=np.float64)
    if a.size == 0:
        nan = math.nan
        return Stats(0, nan, nan, nan, nan, nan, nan, nan)
    q1, med, q3 = (float(v) for v in np.quantile(a, [0.25, 0.5, 0.75]))
    iqr = q3 - q1
    return Stats(n=int(a.size), median=med, mean=float(a.mean()), min=float(a.min()), q1=q1, q3=q3,
                 iqr=iqr, rel_spread=relative_spread_of(iqr, med))


def round_weighted_quartiles(samples: Sequence[float], round_sizes: Sequence[int]) -> tuple[float, float] | None:
    """(Q1, Q3) of pooled rounds with every round weighing the same, or None where ``round_sizes`` does not
    split ``samples``. WHY: a round samples until its median is known to a precision, so a disturbed round
    takes many more samples than a quiet one; pooled quartiles then describe that round, and a headline that is
    the median of the round medians fell outside them (timeit: "935 us median (IQR 962 us - 1.02 ms)"). With
    equal weights the median of round medians always lies inside: at least half the rounds put half their
    weight on each side of it."""
    quartiles = round_weighted_quantiles(samples, round_sizes, (0.25, 0.75))
    return (quartiles[0], quartiles[1]) if quartiles else None


def round_weighted_quantiles(samples: Sequence[float], round_sizes: Sequence[int],
                             quantiles: Sequence[float]) -> list[float] | None:
    """``quantiles`` of pooled rounds with every round weighing the same (:func:`round_weighted_quartiles`), or
    None where ``round_sizes`` does not split ``samples``."""
    if not round_sizes or sum(round_sizes) != len(samples) or min(round_sizes) < 1:
        return None
    values = np.asarray(samples, dtype=np.float64)
    weights = np.concatenate([np.full(n, 1.0 / (n * len(round_sizes))) for n in round_sizes])
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    centre = np.cumsum(w) - w / 2  # each sample at the middle of its weight (Hazen's rule, weighted)
    return [float(x) for x in np.interp(list(quantiles), centre, v)]


def relative_spread_of(iqr: float, median: float) -> float:
    if median > 0:
        return iqr / median
    return 0.0 if iqr == 0 else math.inf


def _quantile(ordered: list[float], p: float) -> float:
    """numpy's default (linear) quantile ``p`` of an ordered, non-empty list."""
    pos = p * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def relative_spread(samples: list[float]) -> float:
    """``iqr / median`` of ``samples`` — the stopping criterion of the timing loop.

    Plain Python, no numpy: the loop calls this between samples, and a numpy call there (even on 8 values)
    slowed the next sample by 5-8% (gelu on 65k float32, 4-call samples of 120 µs, one thread; measured
    interleaved against a bare loop, tests/perf/timeit_vs_torch.py --size 65536), where pure Python did not.
    """
    if not samples:
        return math.nan
    if any(v != v for v in samples):  # a NaN sample: never a spread to stop at (numpy's NaN quartiles gave inf)
        return math.inf
    ordered = sorted(samples)
    q1, med, q3 = (_quantile(ordered, p) for p in (0.25, 0.5, 0.75))
    return relative_spread_of(q3 - q1, med)


#: z of a two-sided 95% interval: the median's precision is stated at 95%.
_Z95 = 1.96


def median_precision(samples: list[float]) -> float:
    """Half the width of the distribution-free 95% interval of the median of ``samples``, relative to the median:
    the precision to which the median is known (0.01: within ±1%). Read from order statistics (ranks
    n/2 ± 0.98 sqrt(n)), so no distribution is assumed and a few stretched samples widen it only as much as
    they move the middle of the sample. inf for fewer than 3 samples or a NaN; plain Python, as
    :func:`relative_spread` (the timing loop calls it between samples).
    """
    n = len(samples)
    if n < 3 or any(v != v for v in samples):
        return math.inf
    ordered = sorted(samples)
    half = _Z95 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half) - 1)  # 0-based ranks of the ends: 1-based (n - z sqrt n) / 2, rounded
    hi = min(n - 1, math.ceil(n / 2 + half))  # down, and 1 + (n + z sqrt n) / 2, rounded up (conservative)
    med = _quantile(ordered, 0.5)
    if med <= 0:
        return math.inf
    return (ordered[hi] - ordered[lo]) / (2 * med)


#: Round medians this far apart (the larger over the smaller, at the widest gap between neighbours) are two
#: modes, not spread: a 2-thread kernel whose second thread found its core taken read 2.7 us in some rounds
#: and 550 us in others (2026-12-06), and the median of [2.7, 550, 2.1, 524] is a time neither mode took.
BIMODAL_GAP = 1.5


def bimodal_split(values: list[float]) -> tuple[list[float], list[float]] | None:
    """``values`` (round medians) as (the faster mode, the slower mode) when they fall in two tight groups: a gap
    of at least :data:`BIMODAL_GAP` between them, and each group spread less than the gap over that factor
    (1, 2, 3 ms is spread, not two modes); None when they form one group (or fewer than 2 values)."""
    xs = sorted(v for v in values if v == v and v > 0)
    if len(xs) < 2:
        return None
    gap, at = max((xs[i + 1] / xs[i], i) for i in range(len(xs) - 1))
    fast, slow = xs[:at + 1], xs[at + 1:]
    tight = max(fast[-1] / fast[0], slow[-1] / slow[0]) < gap / BIMODAL_GAP
    return (fast, slow) if gap >= BIMODAL_GAP and tight else None


def mode_median(values: list[float]) -> float:
    """The headline of a cell's round medians: their median, or with two modes (:func:`bimodal_split`) the
    median of the mode most rounds fell in (the faster on a tie: a disturbance only ever adds time)."""
    split = bimodal_split(values)
    if split is None:
        return _quantile(sorted(values), 0.5)
    fast, slow = split
    return _quantile(fast if len(fast) >= len(slow) else slow, 0.5)

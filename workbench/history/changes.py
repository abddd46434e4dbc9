"""Change points of a series: where its level moved, by how much, and what else changed there.

Why this shape: the tools people use for this either compare with the previous run only (a threshold that
noise forces to 400%), or run a test whose noise model is the history itself (12% false alerts in
Mozilla's study). A run of ours measures its own noise — the spread of its round medians, the precision its
samples reached, its A/A twin — so the penalty of a new segment is set from that noise: a change must
explain more of the series than its noise could by chance, and it must also exceed a threshold (default
5%) to be reported.

The segmentation is ``ruptures``' exact PELT search with a linear kernel (a change in the mean of the log
medians, in C: 1,000 runs take about a millisecond) on log medians, with the penalty
:data:`PENALTY_PER_LOG_N` × σ² × log n, σ the larger of the runs' own noise (the median of their
per-run sigmas) and the spread between consecutive runs (so a machine whose runs move more than any one
run can see raises its own bar). A single wild run is clipped to the running median ± :data:`CLIP_SIGMAS` σ
first, so it cannot open a segment of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.history.series import Point, Series, VersionEvent

#: The smallest step reported, relative (0.05: 5% slower or faster).
DEFAULT_THRESHOLD = 0.05
#: Runs on each side of a change, at least: one run alone is an outlier until the next one agrees.
MIN_RUNS = 2
#: Penalty of a new segment in units of σ² log n (BIC's is 2; calibrated by tests/perf/history.py for at
#: most 1 false alarm per 100 series of 50 runs without a step).
PENALTY_PER_LOG_N = 4.0
#: A run further than this many σ from its neighbours' median is clipped to that distance.
CLIP_SIGMAS = 4.0
#: The least noise a series is given (0.2%): a timer's own resolution, below which no step is told apart.
MIN_SIGMA = 0.002
#: z of the step's interval (95%).
Z_INTERVAL = 1.96
#: A version change this many runs from a change is reported with it.
EVENT_TOLERANCE = 1


@dataclass(frozen=True)
class Change:
    """A step of a series at point ``index`` (the first run at the new level)."""

    index: int
    #: Runs at the old level (back to the previous change) and at the new one (to the next change).
    runs_before: int
    runs_after: int
    #: after / before - 1 (0.15: 15% slower), and its 95% interval.
    step: float
    low: float
    high: float
    level_before_s: float
    level_after_s: float
    #: The last run before the change and the first run after it, with their commits.
    run_before: str
    run_after: str
    commit_before: str
    commit_after: str
    #: Version changes at the same point (within :data:`EVENT_TOLERANCE` runs).
    events: tuple[str, ...]

    @property
    def regression(self) -> bool:
        """Slower after the change."""
        return self.step > 0

    @property
    def text(self) -> str:
        """"+15.2% [+11.0%, +19.5%] at run 7 of the series (RUN_ID) (commit a -> b)"."""
        commits = f" (commit {self.commit_before or '?'} -> {self.commit_after or '?'})" \
            if self.commit_before != self.commit_after else ""
        events = f"; with {'; '.join(self.events)}" if self.events else ""
        return (f"{self.step:+.1%} [{self.low:+.1%}, {self.high:+.1%}] at run {self.index + 1} of the series "
                f"({self.run_after}){commits}{events}")


def series_noise(points: Sequence[Point]) -> float:
    """σ of one run's log median for this series: the larger of what its runs measured of themselves (the
    median of their sigmas) and the robust spread between consecutive runs (1.4826 MAD of the differences
    / √2, which one step barely moves)."""
    own = [p.sigma for p in points if p.sigma > 0]
    within = float(np.median(own)) if own else 0.0
    x = np.log([p.median_s for p in points])
    between = 0.0
    if len(x) >= 3:
        d = np.diff(x)
        d = d - np.median(d)
        robust = 1.4826 * float(np.median(np.abs(d)))
        kept = d[np.abs(d) <= CLIP_SIGMAS * robust] if robust > 0 else d
        between = float(np.sqrt(np.mean(kept ** 2))) / math.sqrt(2) if len(kept) else robust / math.sqrt(2)
    return max(within, between, MIN_SIGMA)


def clipped(x: np.ndarray, sigma: float) -> np.ndarray:
    """``x`` with each value held within :data:`CLIP_SIGMAS` σ of the median of it and its 4 neighbours."""
    if len(x) < 5:
        return x
    padded = np.pad(x, 2, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 5)
    mid = np.median(windows, axis=1)
    return np.clip(x, mid - CLIP_SIGMAS * sigma, mid + CLIP_SIGMAS * sigma)


def breakpoints(x: np.ndarray, sigma: float) -> list[int]:
    """Indices where a new segment starts, by PELT with the penalty from ``sigma``."""
    import ruptures

    n = len(x)
    if n < 2 * MIN_RUNS:
        return []
    algo = ruptures.KernelCPD(kernel="linear", min_size=MIN_RUNS, jump=1).fit(x.reshape(-1, 1))
    return [int(b) for b in algo.predict(pen=PENALTY_PER_LOG_N * sigma ** 2 * math.log(n))[:-1]]


def _step(x: np.ndarray, lo: int, cut: int, hi: int, sigma: float) -> tuple[float, float]:
    """(log step, its standard error) between segments x[lo:cut] and x[cut:hi]."""
    a, b = x[lo:cut], x[cut:hi]
    resid = np.concatenate([a - a.mean(), b - b.mean()])
    pooled = math.sqrt(float(resid @ resid) / max(len(resid) - 2, 1))
    se = max(sigma, pooled) * math.sqrt(1 / len(a) + 1 / len(b))
    return float(b.mean() - a.mean()), se


def kept_breakpoints(x: np.ndarray, cuts: list[int], sigma: float, threshold: float) -> list[int]:
    """``cuts`` less those whose step is below ``threshold`` or whose interval holds 0, the weakest dropped
    first and the steps of its neighbours measured again on the merged segments."""
    cuts = list(cuts)
    floor = math.log1p(threshold)
    while cuts:
        bounds = [0, *cuts, len(x)]
        scores = []
        for i, c in enumerate(cuts):
            d, se = _step(x, bounds[i], c, bounds[i + 2], sigma)
            scores.append(min(abs(d) / floor if floor > 0 else math.inf, abs(d) / (Z_INTERVAL * se)))
        weakest = int(np.argmin(scores))
        if scores[weakest] >= 1.0:
            break
        del cuts[weakest]
    return cuts


def find_changes(series: Series, threshold: float = DEFAULT_THRESHOLD) -> tuple[list[Change], float]:
    """The changes of ``series`` of at least ``threshold`` (relative), and its noise σ."""
    pts = series.points
    if len(pts) < 2 * MIN_RUNS:
        return [], series_noise(pts) if pts else MIN_SIGMA
    sigma = series_noise(pts)
    x = clipped(np.log([p.median_s for p in pts]), sigma)
    cuts = kept_breakpoints(x, breakpoints(x, sigma), sigma, threshold)
    events = series.events()
    bounds = [0, *cuts, len(x)]
    out = []
    for i, c in enumerate(cuts):
        lo, hi = bounds[i], bounds[i + 2]
        d, se = _step(x, lo, c, hi, sigma)
        out.append(Change(
            index=c, runs_before=c - lo, runs_after=hi - c, step=math.expm1(d),
            low=math.expm1(d - Z_INTERVAL * se), high=math.expm1(d + Z_INTERVAL * se),
            level_before_s=math.exp(float(x[lo:c].mean())), level_after_s=math.exp(float(x[c:hi].mean())),
            run_before=pts[c - 1].run.run_id, run_after=pts[c].run.run_id,
            commit_before=pts[c - 1].run.commit, commit_after=pts[c].run.commit,
            events=_events_near(events, c)))
    return out, sigma


def _events_near(events: Sequence[VersionEvent], index: int) -> tuple[str, ...]:
    return tuple(e.text for e in events if abs(e.index - index) <= EVENT_TOLERANCE)


def latest_level(series: Series, changes: Sequence[Change]) -> float:
    """The series' level now: the geometric mean of its runs since its last change (all runs without one)."""
    start = changes[-1].index if changes else 0
    return math.exp(float(np.mean(np.log([p.median_s for p in series.points[start:]]))))

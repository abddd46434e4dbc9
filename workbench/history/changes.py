"""Change points of a series: where its level moved, by how much, and what else changed there.

Why this shape: the tools people use for this either compare with the previous run only (a threshold that
noise forces to 400%), or run a test whose noise model is the history itself (12% false alerts in
Mozilla's study). A run of ours measures its own noise — the spread of its round medians, the precision its
samples reached, its A/A twin — so each run is weighted by that noise, the penalty of a new segment is set
from it, and a change must also exceed a threshold (default 5%) to be reported.

The search (:mod:`workbench.history.segment`) is an exact weighted PELT on log medians; the noise is each
run's own σ plus a between-run term read from the robust spread of successive differences (which a step
barely moves); runs far from their neighbours on both sides are set aside as outliers, and a change must
stand with any one run on either side left out, so a single wild run never makes one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.history.segment import (
    MIN_RUNS,
    MIN_SIGMA,
    PENALTY_PER_LOG_N,
    kept_cuts,
    outliers,
    pelt,
    series_noise,
    step,
)
from workbench.history.series import Series, VersionEvent

#: The smallest step reported, relative (0.05: 5% slower or faster).
DEFAULT_THRESHOLD = 0.05
#: z of the step's interval (95%), and the bar a step must clear (its interval must not hold 0).
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
    def same_code(self) -> bool:
        """The same clean commits and versions on both sides: the code did not change here, the machine did
        (a busy host's memory bandwidth moves DRAM-sized cells 20-30% for hours). Unknown or dirty commits
        are not the same code."""
        return bool(self.commit_before) and self.commit_before == self.commit_after \
            and "+" not in self.commit_before and not self.events

    @property
    def text(self) -> str:
        """"+15.2% [+11.0%, +19.5%] at run 7 of the series (RUN_ID) (commit a -> b)"."""
        commits = f" (commit {self.commit_before or '?'} -> {self.commit_after or '?'})" \
            if self.commit_before != self.commit_after else ""
        events = f"; with {'; '.join(self.events)}" if self.events else ""
        if self.same_code:
            events += "; same code on both sides (the machine moved)"
        return (f"{self.step:+.1%} [{self.low:+.1%}, {self.high:+.1%}] at run {self.index + 1} of the series "
                f"({self.run_after}){commits}{events}")


@dataclass(frozen=True)
class Analysis:
    """A series' changes, its noise σ (one run's, typical), the between-run part of it, and the indices of
    the runs set aside as outliers."""

    changes: list[Change]
    sigma: float
    between: float = 0.0
    outliers: tuple[int, ...] = ()


def analyse(series: Series, threshold: float = DEFAULT_THRESHOLD) -> Analysis:
    """The changes of ``series`` of at least ``threshold`` (relative), its noise and its outliers."""
    pts = series.points
    if not pts:
        return Analysis([], MIN_SIGMA)
    x = np.log([p.median_s for p in pts])
    noise = series_noise(x, np.array([p.sigma for p in pts]))
    wild = outliers(x, noise.sigmas)
    kept = np.flatnonzero(~wild)
    xk, wk = x[kept], 1.0 / noise.sigmas[kept] ** 2
    if len(kept) < 2 * MIN_RUNS:
        return Analysis([], noise.typical, noise.between, tuple(int(i) for i in np.flatnonzero(wild)))
    cuts = pelt(xk, wk, PENALTY_PER_LOG_N * math.log(len(kept)))
    cuts = kept_cuts(xk, wk, cuts, threshold, Z_INTERVAL)
    events = series.events()
    bounds = [0, *cuts, len(kept)]
    out = []
    for i, c in enumerate(cuts):
        lo, hi = bounds[i], bounds[i + 2]
        d, se = step(xk, wk, slice(lo, c), slice(c, hi))
        at = int(kept[c])
        first, end = int(kept[lo]) if i else 0, int(kept[hi]) if hi < len(kept) else len(x)
        level_before = float(xk[lo:c] @ wk[lo:c] / wk[lo:c].sum())
        out.append(Change(
            index=at, runs_before=at - first, runs_after=end - at, step=math.expm1(d),
            low=math.expm1(d - Z_INTERVAL * se), high=math.expm1(d + Z_INTERVAL * se),
            level_before_s=math.exp(level_before), level_after_s=math.exp(level_before + d),
            run_before=pts[at - 1].run.run_id, run_after=pts[at].run.run_id,
            commit_before=pts[at - 1].run.commit, commit_after=pts[at].run.commit,
            events=_events_near(events, at)))
    return Analysis(out, noise.typical, noise.between, tuple(int(i) for i in np.flatnonzero(wild)))


def find_changes(series: Series, threshold: float = DEFAULT_THRESHOLD) -> tuple[list[Change], float]:
    """The changes of ``series`` of at least ``threshold`` (relative), and its noise σ."""
    a = analyse(series, threshold)
    return a.changes, a.sigma


def _events_near(events: Sequence[VersionEvent], index: int) -> tuple[str, ...]:
    return tuple(e.text for e in events if abs(e.index - index) <= EVENT_TOLERANCE)


def latest_level(series: Series, changes: Sequence[Change]) -> float:
    """The series' level now: the geometric mean of its runs since its last change (all runs without one)."""
    start = changes[-1].index if changes else 0
    return math.exp(float(np.mean(np.log([p.median_s for p in series.points[start:]]))))

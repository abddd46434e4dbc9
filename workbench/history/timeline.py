"""A store's history: every series with its changes and latest level, and the regressions a CI gate fails on.

One function (:func:`build_history`) serves ``workbench history``, the report's History section and the
dashboard's history view, so the three agree on what changed where.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from workbench.core.record import JsonObject
from workbench.history.changes import DEFAULT_THRESHOLD, Change, analyse, latest_level
from workbench.history.series import RunInfo, Series, SeriesFilter, read_series


@dataclass
class SeriesHistory:
    """One series, its changes (oldest first), its noise σ, its level now, the between-run part of its
    noise and the points set aside as outliers (indices)."""

    series: Series
    changes: list[Change]
    sigma: float
    level_s: float
    between: float = 0.0
    outliers: tuple[int, ...] = ()

    @property
    def latest_regression(self) -> Change | None:
        """The series' last change where the code or versions changed, when it is a slowdown: a regression
        still in effect. A step with the same code on both sides is the machine's, not the code's."""
        code = [c for c in self.changes if not c.same_code]
        return code[-1] if code and code[-1].regression else None

    def to_json(self) -> JsonObject:
        s = self.series
        return {
            "series": s.key, "label": s.label, "machine": s.machine.id, "machine_label": s.machine.label,
            "kernel": s.kernel, "variant": s.variant, "backend": s.backend, "dtype": s.dtype,
            "size": s.size_label, "mode": s.mode, "cache": s.cache, "timer_kind": s.timer_kind,
            "cell_key": s.cell_key, "runs": len(s.points), "noise": self.sigma, "level_s": self.level_s,
            "changes": [{"index": c.index, "run_before": c.run_before, "run_after": c.run_after,
                         "runs_before": c.runs_before, "runs_after": c.runs_after, "step": c.step,
                         "step_low": c.low, "step_high": c.high, "level_before_s": c.level_before_s,
                         "level_after_s": c.level_after_s, "commit_before": c.commit_before,
                         "commit_after": c.commit_after, "events": list(c.events),
                         "same_code": c.same_code} for c in self.changes],
            "events": [{"index": e.index, "run": s.points[e.index].run.run_id, "changes": list(e.changes)}
                       for e in s.events()],
            "noise_between": self.between,
            "outliers": [s.points[i].run.run_id for i in self.outliers],
            "points": [{"run_id": p.run.run_id, "created_at": p.run.created_at, "median_s": p.median_s,
                        "sigma": p.sigma, "commit": p.run.commit, "tag": p.run.tag} for p in s.points],
        }


@dataclass
class History:
    """Every series read, with changes first, and the runs they span."""

    series: list[SeriesHistory]
    runs: dict[str, RunInfo]
    threshold: float = DEFAULT_THRESHOLD
    machines: dict[str, str] = field(default_factory=dict)

    def regressions(self, pct: float) -> list[tuple[SeriesHistory, Change]]:
        """Series whose last change of code or versions is a slowdown of at least ``pct`` percent, largest
        first."""
        out = [(h, c) for h in self.series if (c := h.latest_regression) is not None and c.step * 100 >= pct]
        return sorted(out, key=lambda hc: -hc[1].step)

    def to_json(self) -> JsonObject:
        return {"threshold": self.threshold, "machines": dict(self.machines),
                "series": [h.to_json() for h in self.series]}


def build_history(conn: sqlite3.Connection, which: SeriesFilter = SeriesFilter(),
                  threshold: float = DEFAULT_THRESHOLD, min_runs: int = 1) -> History:
    """The history of a store (its SQLite connection): series of at least ``min_runs`` runs, those with
    changes first (largest step first), then by machine and cell."""
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and 0 <= threshold < 10):
        raise ValueError(f"threshold {threshold!r} is not a fraction between 0 and 10 (0.05: 5%)")
    series, runs = read_series(conn, which, min_runs)
    out = []
    for s in series:
        if len(s.points) < min_runs:
            continue
        a = analyse(s, threshold)
        out.append(SeriesHistory(s, a.changes, a.sigma, latest_level(s, a.changes), a.between, a.outliers))
    out.sort(key=lambda h: (not h.changes, -max((abs(c.step) for c in h.changes), default=0.0)))
    return History(out, runs, threshold, {h.series.machine.id: h.series.machine.label for h in out})


def most_runs(histories: Iterable[SeriesHistory]) -> int:
    """The most runs any series has (0 for none)."""
    return max((len(h.series.points) for h in histories), default=0)

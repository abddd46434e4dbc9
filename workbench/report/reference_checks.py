"""Is a reference time off its own other evidence? Judged for every reference of a report at once.

A reference row is compared only with the ok rows of its own series (kernel, variant, backend, dtype): its
other rounds, the same cell in other runs on the same machine, and the trend of its other sizes in its run.
:class:`ReferenceChecks` finds each series' rows once and fits each (series, run) size trend once, so a
report of a million rows asks the same questions without filtering the whole frame per reference (the
pairwise-slope fit of 500 sizes, repeated for each of them, alone took hours).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.core.units import fmt_time_auto

#: A reference time this many times off its own other evidence is flagged where its speed-ups are shown.
REFERENCE_OFF = 3.0
#: The columns that name a reference's series.
SERIES = ("kernel", "variant", "backend", "dtype")


def _median(row: Mapping[str, Any]) -> float | None:
    try:
        v = float(row.get("median_s"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if v > 0 and v == v else None


def _number(v: Any) -> float:
    """A value as a number, 0 where it is none (as ``pd.to_numeric(errors="coerce").fillna(0)``)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(x) else x


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


class _Columns:
    """A frame's columns as arrays, read once and shared by every series (a series held a copy of its rows,
    which for a million rows doubled the frame), with plain rows read out by position."""

    def __init__(self, df: pd.DataFrame):
        self.names = list(df.columns)
        self.arrays = {c: df[c].to_numpy() for c in self.names}
        self.numeric = {c: a.dtype.kind in "iufb" for c, a in self.arrays.items()}
        self.medians = pd.to_numeric(df["median_s"], errors="coerce").to_numpy(float) if "median_s" in df \
            else np.full(len(df), np.nan)
        self.work = (_numbers(df, "flops") + _numbers(df, "bytes"))

    def row(self, i: int) -> RowDict:
        """Row ``i`` as a plain mapping of Python values (NaN as NaN, a nullable column's missing value None),
        as ``to_dict("records")`` gives it."""
        out = {}
        for c in self.names:
            v = self.arrays[c][i]
            out[c] = v.item() if self.numeric[c] else (None if v is pd.NA else v)
        return out


def _numbers(df: pd.DataFrame, column: str) -> np.ndarray:
    """A column as numbers, 0 where it has none (or the frame lacks it)."""
    if column not in df:
        return np.zeros(len(df))
    return pd.to_numeric(df[column], errors="coerce").fillna(0).to_numpy(float)


class _Series:
    """One series' ok rows (positions into the report frame, in table order), indexed for the three
    questions."""

    def __init__(self, table: _Columns, positions: np.ndarray):
        self.table, self.positions = table, positions
        runs = table.arrays.get("run_id")
        self.run = runs[positions].tolist() if runs is not None else None
        params = table.arrays.get("params")
        self.params = params[positions].tolist() if params is not None else [None] * len(positions)
        self.first: dict[tuple[Any, Any], int] = {}  # (params, run_id) -> its first row's position
        for i, key in enumerate(zip(self.params, self.run or [None] * len(positions), strict=True)):
            self.first.setdefault(key, i)
        self.medians = table.medians[positions]
        self.same_cell: dict[tuple[Any, Any], np.ndarray] | None = None
        self.fits: dict[Any, tuple[float, float] | None] = {}
        self._run_array: np.ndarray | None = None

    def row(self, i: int) -> RowDict:
        """Row ``i`` of the series as a plain mapping (``rows.iloc[i]`` cost 150 µs: most of the reference
        checks of a large report, which asks for one row per reference cell)."""
        return self.table.row(int(self.positions[i]))

    def run_array(self) -> np.ndarray:
        """The rows' run ids as an array (built on first use): a cell timed in 100 runs was compared run by run
        in Python for each of its references."""
        if self._run_array is None:
            self._run_array = np.asarray(self.run, dtype=object)
        return self._run_array

    def cells(self) -> dict[tuple[Any, Any], np.ndarray]:
        """Positions of the rows of each (params, env_id), in table order (built on first use)."""
        if self.same_cell is None:
            env = self.table.arrays.get("env_id")
            envs = env[self.positions].tolist() if env is not None else [None] * len(self.positions)
            groups: dict[tuple[Any, Any], list[int]] = {}
            for i, key in enumerate(zip(self.params, envs, strict=True)):
                groups.setdefault(key, []).append(i)
            self.same_cell = {k: np.asarray(v) for k, v in groups.items()}
        return self.same_cell

    def fit(self, run_id: Any) -> tuple[float, float] | None:
        """(intercept, slope) of log time on log work over the series' sizes in ``run_id`` (every row when
        the rows name no run): the median of the pairwise slopes, then the median intercept; None with
        fewer than three distinct works."""
        if run_id not in self.fits:
            mine = self.positions if self.run is None else self.positions[self.run_array() == run_id]
            work = self.table.work[mine]
            times = self.table.medians[mine]
            keep = (work > 0) & (times > 0)
            x, y = np.log(work[keep]), np.log(times[keep])
            fit = None
            if len(np.unique(x)) >= 3:
                i, j = np.triu_indices(len(x), k=1)
                dx = x[j] - x[i]
                distinct = dx != 0
                b = float(np.median((y[j] - y[i])[distinct] / dx[distinct]))
                fit = (float(np.median(y - b * x)), b)
            self.fits[run_id] = fit
        return self.fits[run_id]


class ReferenceChecks:
    """:meth:`anomaly` of any row of ``df``: each series' ok rows found once, each size trend fitted once."""

    def __init__(self, df: pd.DataFrame):
        self._by_series: dict[tuple[Any, ...], _Series] = {}
        if "status" in df and len(df) and set(SERIES) <= set(df):
            ok = np.flatnonzero((df["status"] == Status.OK).to_numpy(bool))
            if len(ok):
                table = _Columns(df)
                groups = df[list(SERIES)].iloc[ok].groupby(list(SERIES), sort=False, dropna=True).indices
                self._by_series = {k: _Series(table, ok[v]) for k, v in groups.items()}
        self._named_runs = "run_id" in df and "env_id" in df

    def series(self, key: tuple[Any, ...]) -> _Series | None:
        """The ok rows of one (kernel, variant, backend, dtype) series (None: none, or a key part missing)."""
        return None if any(_missing(v) for v in key) else self._by_series.get(key)

    def first_row(self, key: tuple[Any, ...], params: Any, run_id: Any) -> RowDict | None:
        """The series' first ok row at ``params`` in run ``run_id``."""
        s = self.series(key)
        if s is None or _missing(params) or (s.run is not None and _missing(run_id)):
            return None
        i = s.first.get((params, run_id if s.run is not None else None))
        return s.row(i) if i is not None else None

    def anomaly(self, ref: Mapping[str, Any]) -> str | None:
        """Why the reference's time in ``ref`` is off its own other evidence, or None: its rounds' medians
        differ more than :data:`REFERENCE_OFF` times; another run on the same machine timed the same cell
        that far apart; or its time is that far off the trend of its other sizes in its run (one bad size
        stands out, its good neighbours do not; needs three sizes). Every speed-up over it inherits the
        error."""
        t = _median(ref)
        if t is None:
            return None
        try:
            rounds = [float(x) for x in json.loads(ref.get("round_medians_s") or "[]") if float(x) > 0]
        except (TypeError, ValueError):
            rounds = []
        if len(rounds) > 1 and max(rounds) / min(rounds) > REFERENCE_OFF:
            return (f"the reference's rounds disagree: medians from {fmt_time_auto(min(rounds))} to "
                    f"{fmt_time_auto(max(rounds))}; speed-ups over it are unreliable")
        s = self.series(tuple(ref.get(c) for c in SERIES))
        if s is None:
            return None
        if self._named_runs and not _missing(ref.get("params")) and not _missing(ref.get("env_id")):
            again = s.cells().get((ref.get("params"), ref.get("env_id")), np.empty(0, int))
            if len(again):
                o = s.medians[again]
                other_run = s.run_array()[again] != ref.get("run_id")
                valid = (o > 0) & ~np.isnan(o)
                with np.errstate(divide="ignore", invalid="ignore"):
                    off = np.maximum(o, t) / np.minimum(o, t) > REFERENCE_OFF
                hit = np.flatnonzero(other_run & valid & off)
                if len(hit):
                    i = int(again[hit[0]])
                    return (f"the reference took {fmt_time_auto(t)} here and {fmt_time_auto(float(o[hit[0]]))} in "
                            f"run {s.run[i]} on the same machine; speed-ups over it are unreliable")
        fit = s.fit(ref.get("run_id") if s.run is not None else None)
        if fit is None:
            return None
        w = _number(ref.get("flops")) + _number(ref.get("bytes"))
        if w <= 0:
            return None
        expected = float(np.exp(fit[0] + fit[1] * np.log(w)))
        if max(t, expected) / min(t, expected) <= REFERENCE_OFF:
            return None
        return (f"the reference took {fmt_time_auto(t)} at {ref.get('size_label')} where its other sizes predict "
                f"about {fmt_time_auto(expected)}: its time here is off its own other sizes, so speed-ups over it "
                "are unreliable")

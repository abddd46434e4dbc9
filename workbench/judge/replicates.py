"""Several runs a side: ``workbench compare A1,A2 B1,B2`` judges each cell on the mean of its runs' medians.

Two runs of one suite differ by more than their rounds explain (the host between the runs: a few percent on
our VMs), and no number of rounds inside one run can see that part; more runs can. Runs of one side are
replicates of each other: the scatter of a cell's medians among them measures the run-to-run noise directly,
without the change under test in it. So each side's level is the mean of its runs' log medians (each run judged
at one speed, as :func:`workbench.judge.compare.compare_runs` does), and its standard error is the larger of
what the runs' own rounds and the replicate pairs' excess noise predict, ``sqrt((mean median error² + tau²) / k)``,
and the scatter its ``k`` runs show. The interval, as between two runs, is
:data:`~workbench.judge.verdicts.K_BETWEEN` sigmas wide, and shrinks with the square root of the runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.core.status import Status
from workbench.judge import verdicts as vd
from workbench.judge.anchored import BASIS_RUNS, _library_conditions, run_ratios
from workbench.judge.between_runs import SpeedProbes, between_run_noise, run_conditions
from workbench.judge.compare import CELL_COLUMNS, RESULT_COLUMNS, _check_runs, row_times

if TYPE_CHECKING:
    import pandas as pd

#: A cell's log median and the standard error of it, in one run.
Level = tuple[float, float]


#: Per run, each cell's :data:`Level`.
Levels = dict[str, dict[tuple, Level]]


def run_levels(df: pd.DataFrame, run_ids: Sequence[str], key: list[str],
               reference: pd.DataFrame) -> tuple[Levels, Levels]:
    """Per run, each ok cell's log median and its standard error (from its round medians; cells with fewer
    than :data:`~workbench.judge.verdicts.MIN_ROUNDS` rounds are left out), twice, from one reading of the rows:
    at one speed (each run's rounds divided by the median of their speed probes, memory-bound cells past the
    cache by their bandwidth probes, and put at the speed ``reference``, the first run, read, for cells measured
    on the reference's machine), and as measured."""
    ref_rows = {tuple(r[k] for k in key): r for _, r in reference.iterrows()}
    speed_ref = _median_probe(reference, memory=False)
    memory_ref = _median_probe(reference, memory=True)
    probed: Levels = {}
    measured: Levels = {}
    for run in run_ids:
        probed[run], measured[run] = {}, {}
        for _, r in df[df["run_id"] == run].iterrows():
            if r["status"] != Status.OK:
                continue
            cell = tuple(r[k] for k in key)
            times, rounds = row_times(r)
            times = vd.clean(times)
            if not rounds or len(times) < vd.MIN_ROUNDS:
                continue
            base = ref_rows.get(cell)
            steady = _at_one_speed(r, times, speed_ref, memory_ref) \
                if base is not None and base.get("env_id") == r.get("env_id") else times
            for out, t in ((probed, steady), (measured, times)):
                logs = np.log(t)
                out[run][cell] = (vd.median(logs), vd.median_error(logs))
    return probed, measured


def _probes(r: Any, memory: bool) -> np.ndarray:
    """A row's probes per round: seconds a byte (1 / GB/s) for a memory-bound cell past the cache with
    bandwidth probes when ``memory``, else its speed probes (empty where it has none of the kind)."""
    if memory:
        return SpeedProbes.per_byte(r, "") if r.get("bound") == "memory-bound" else np.array([])
    return SpeedProbes.read(r, "")


def _median_probe(run: pd.DataFrame, memory: bool) -> float | None:
    values = [p for _, r in run.iterrows() if r["status"] == Status.OK for p in _probes(r, memory)]
    return float(np.median(values)) if values else None


def _at_one_speed(r: Any, times: np.ndarray, speed_ref: float | None, memory_ref: float | None) -> np.ndarray:
    for memory, ref in ((True, memory_ref), (False, speed_ref)):
        p = _probes(r, memory)
        if len(p):  # a memory-bound cell with bandwidth probes is never judged by its speed probes
            return times / float(np.median(p)) * ref if ref is not None and len(p) == len(times) else times
    return times


def replicate_noise(levels: Sequence[dict[tuple, Level]]) -> float | None:
    """The run-to-run noise (log sigma of the difference of two runs, as
    :func:`~workbench.judge.between_runs.between_run_noise` gives it) beyond the cells' own rounds, from every pair
    of one side's runs (their median); None for one run. One run's own part is 1/sqrt(2) of it."""
    taus = []
    for x, y in combinations(levels, 2):
        cells = [c for c in x if c in y]
        taus.append(between_run_noise([x[c][0] - y[c][0] for c in cells],
                                      [math.hypot(x[c][1], y[c][1]) for c in cells]))
    return float(np.median(taus)) if taus else None


def side_level(levels: Sequence[Level], tau: float) -> tuple[float, float]:
    """(mean log median, its standard error) of one cell over one side's runs. From three runs on, the runs'
    typical error (the median of their squared errors) stands for them: one run with a disturbed round (13.2,
    17.1, 13.2 us) has a sound median but a round spread of 15%, which as a mean widened the side to ±10% though
    its three runs' levels agreed within 1%; their own scatter still bounds the error from below."""
    m = np.array([x for x, _ in levels])
    e = np.array([s for _, s in levels])
    k = len(m)
    typical = float(np.median(e ** 2)) if k >= 3 else float(np.mean(e ** 2))
    model = (typical + tau ** 2) / k
    seen = float(np.var(m, ddof=1)) / k if k >= 2 else 0.0
    return float(np.mean(m)), math.sqrt(max(model, seen))


def replicated_verdict(a: Sequence[Level], b: Sequence[Level], tau: float, *, min_effect: float = vd.MIN_EFFECT,
                       confidence: float = vd.BETWEEN_COVERAGE) -> vd.Verdict:
    """One cell judged on several runs a side (:func:`side_level` of each): speed-up = time A / time B."""
    la, sa = side_level(a, tau)
    lb, sb = side_level(b, tau)
    effect, noise = la - lb, math.hypot(sa, sb)
    half = vd.K_BETWEEN * noise * vd._quantile(confidence, None) / vd._quantile(vd.BETWEEN_COVERAGE, None)
    return vd._verdict(effect, effect - half, effect + half, noise, len(a), len(b), vd.RUNS, confidence,
                       min_effect, tau)


def compare_run_groups(df: pd.DataFrame, runs_a: Sequence[str], runs_b: Sequence[str], **kw: Any) -> pd.DataFrame:
    """:func:`~workbench.judge.compare.compare_runs` with several runs a side: per cell ok in at least one run of
    each side, the speed-up of side B over side A (the mean of each side's log medians), its interval and a
    verdict on basis "runs" (:func:`replicated_verdict`; ``n_a``/``n_b`` count runs). The run-to-run noise
    (``attrs["run_noise"]``, of two runs' difference as ``compare_runs`` gives it; ``attrs["run_noise_per_run"]``,
    one run's part) is measured between the runs of each side (:func:`replicate_noise`); with one run on both
    sides, use ``compare_runs``. ``kw`` goes to the verdict."""
    import pandas as pd

    runs_a, runs_b = list(runs_a), list(runs_b)
    _check_runs(df, runs_a + runs_b)
    if set(runs_a) & set(runs_b):
        raise ValueError(f"run(s) {sorted(set(runs_a) & set(runs_b))} are on both sides; a run belongs to one side")
    key = list(CELL_COLUMNS)
    sides = [df[df["run_id"].isin(runs)] for runs in (runs_a, runs_b)]
    if any(x.duplicated(key + ["run_id"]).any() for x in sides):
        key += [c for c in ("env_id", "device") if c in df][:1]
    reference = df[df["run_id"] == runs_a[0]]
    levels, raw = run_levels(df, runs_a + runs_b, key, reference)
    pair_noise = _sides_noise(levels, runs_a, runs_b)
    probes_unused = None
    if (as_measured := _sides_noise(raw, runs_a, runs_b)) < pair_noise:  # chosen once, for all cells, by noise
        probes_unused = (f"the probes did not follow the cells between the runs (run-to-run noise "
                         f"{100 * pair_noise:.1f}% judged over them, {100 * as_measured:.1f}% as measured): cells are "
                         "judged as measured")
        levels, pair_noise = raw, as_measured
    tau = pair_noise / math.sqrt(2)  # a pair's difference holds two runs' noise: one run's is 1/sqrt(2) of it
    medians = {run: _medians(df[df["run_id"] == run], key) for run in runs_a + runs_b}
    cells = list(dict.fromkeys(c for run in runs_a + runs_b for c in medians[run]))
    rows, modes_differ, few_rounds = [], 0, 0
    for cell in cells:
        if len({medians[r][cell][1] for r in runs_a + runs_b if cell in medians[r]} - {None}) > 1:
            modes_differ += 1  # a time of one timing mode is never set against another's
            continue
        a = [levels[r][cell] for r in runs_a if cell in levels[r]]
        b = [levels[r][cell] for r in runs_b if cell in levels[r]]
        if not a or not b:  # ok on both sides but with too few rounds to place its median: said, not dropped
            few_rounds += any(cell in medians[r] for r in runs_a) and any(cell in medians[r] for r in runs_b)
            continue
        v = replicated_verdict(a, b, tau, **kw)
        ma = [medians[r][cell][0] for r in runs_a if cell in medians[r]]
        mb = [medians[r][cell][0] for r in runs_b if cell in medians[r]]
        rec = dict(zip(key, cell, strict=True)) | v.to_dict()
        rec.update(median_a=float(np.median(ma)), median_b=float(np.median(mb)), noisy=False,
                   status_a=Status.OK, status_b=Status.OK, size=None, size_label=None, anchor=None)
        rows.append(rec)
    labels = _size_labels(df, key)
    for rec in rows:
        rec["size"], rec["size_label"] = labels.get(tuple(rec[k] for k in key), (None, None))
    anchored, anchored_noise = anchor_groups(rows, df, runs_a, runs_b, key, **kw)
    table = pd.DataFrame(rows, columns=key + RESULT_COLUMNS + ["status_a", "status_b", "size", "size_label",
                                                                 "anchor"])
    modes = (f"{modes_differ} cell(s) not compared: their runs timed them in different timing modes"
             if modes_differ else None)
    table.attrs["unjudged"] = _unjudged(few_rounds)
    table.attrs.update(run_noise=pair_noise, run_noise_per_run=tau, speed_drift=None, bandwidth_drift=None,
                       timing_modes=modes, conditions=run_conditions(*sides), runs=(runs_a, runs_b),
                       probes_unused=probes_unused, anchored=anchored, anchored_noise=anchored_noise)
    return table


def _unjudged(cells: int) -> str | None:
    """Why ``cells`` cells ok on both sides have no verdict (None when there are none)."""
    if not cells:
        return None
    return (f"{cells} cell(s) ok on both sides not judged: a run's row needs at least {vd.MIN_ROUNDS} round medians "
            f"(bench --rounds {vd.MIN_ROUNDS}) to place its median among several runs; compare two runs (one a "
            "side) to judge them on their samples")


def _medians(run: pd.DataFrame, key: list[str]) -> dict[tuple, tuple[float, str | None]]:
    """Each ok cell's median time (seconds) in one run, and the timing mode it was timed in."""
    ok = run[run["status"] == Status.OK]
    out = {}
    for _, r in ok.iterrows():
        median, mode = r.get("median_s"), r.get("timing_mode")
        if median is not None and math.isfinite(float(median)):
            out[tuple(r[k] for k in key)] = (float(median), mode if isinstance(mode, str) else None)
    return out


def _size_labels(df: pd.DataFrame, key: list[str]) -> dict[tuple, tuple[Any, Any]]:
    cols = [c for c in ("size", "size_label") if c in df]
    return {tuple(r[k] for k in key): (r.get("size"), r.get("size_label")) for _, r in
            df[key + cols].drop_duplicates(key).iterrows()}


def _sides_noise(levels: Levels, runs_a: list[str], runs_b: list[str]) -> float:
    """The median of each side's :func:`replicate_noise` (a pair's difference); STREAM_NOISE with one run a side."""
    taus = [t for t in (replicate_noise([levels[r] for r in runs]) for runs in (runs_a, runs_b)) if t is not None]
    return float(np.median(taus)) if taus else vd.STREAM_NOISE


def anchor_groups(rows: list[dict[str, Any]], df: pd.DataFrame, runs_a: list[str], runs_b: list[str],
                  key: list[str], **kw: Any) -> tuple[int, float | None]:
    """Re-judge ``rows`` (one per cell, as :func:`compare_run_groups` builds them) against each cell's library
    baseline in every run, as :mod:`workbench.judge.anchored` does for one pair: each run's level is the median of
    the cell's round-by-round log ratio to its baseline, each side the mean of its runs'. Used where the baseline
    is a library call of the same environment and threads in every run and is not itself called changed, and
    where its noise is below the absolute one. Returns (cells re-judged, the anchored run-to-run noise)."""
    runs = runs_a + runs_b
    ratios = {run: run_ratios(df[df["run_id"] == run], key) for run in runs}
    conditions = [_library_conditions(df[df["run_id"] == run], key) for run in runs]
    levels = {run: {c: (vd.median(d), vd.median_error(d)) for c, (d, _, _) in ratios[run].items()} for run in runs}
    tau = _sides_noise(levels, runs_a, runs_b) / math.sqrt(2)
    by_cell = {tuple(rec[k] for k in key): rec for rec in rows}
    done = 0
    for cell, rec in by_cell.items():
        found = [ratios[run][cell] for run in runs if cell in ratios[run]]
        base = by_cell.get(found[0][1]) if found else None
        if base is None or base["verdict"] in ("faster", "slower") or len({f[1] for f in found}) > 1:
            continue
        if len({c.get(found[0][1]) for c in conditions}) != 1 or found[0][1] not in conditions[0]:
            continue  # not a library call in every run, or another environment or threads in one of them
        a = [levels[r][cell] for r in runs_a if cell in levels[r]]
        b = [levels[r][cell] for r in runs_b if cell in levels[r]]
        if not a or not b:
            continue
        v = replicated_verdict(a, b, tau, **kw)
        if v.noise < rec["noise"]:  # chosen by noise alone, never by the effect either shows
            rec.update(v.to_dict(), basis=BASIS_RUNS, anchor=found[0][2])
            done += 1
    return done, tau

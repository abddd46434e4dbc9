"""Is B really faster than A? Speed-ups from stored rows, judged against the noise across rounds and runs.

Every verdict comes from :mod:`workbench.judge.verdicts` (``docs/statistics.md`` explains the rules):

- **between runs** (:func:`compare_runs`): the same cell in two runs, unpaired, on each row's per-round
  medians; the run-to-run noise is measured across the matched ok cells of the two runs whose rows record the
  same thread pools and device in both (a cell whose settings changed is the change under test), since no
  single cell can see it;
- **within a run** (:func:`speedup_vs_baseline`): a variant against its baseline, paired round by round
  when both rows have the same number (≥ :data:`~workbench.judge.verdicts.MIN_ROUNDS`) of rounds, so drift
  common to both cancels.

Rows with fewer rounds (one stream of samples, e.g. stored before rounds existed) are judged on their
samples with the conservative one-stream floor. Speed-up is always time(A) / time(B): above 1 means B
(the variant, or the later run) is faster. Verdicts: faster, slower, same (the whole interval within ±10%),
inconclusive (with the smallest effect it could have seen, and what would settle it), insufficient samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

import numpy as np

from workbench.core.frames import column_values, take_rows, where_rows
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.judge import many as judge_many
from workbench.judge import verdicts as vd
from workbench.judge.anchored import anchor
from workbench.judge.baselines import _pick_baseline as _pick_baseline  # tests check the fast path by it
from workbench.judge.baselines import library_variants, pair_positions
from workbench.judge.between_runs import (
    BothTimes,
    SpeedProbes,
    at_speed,
    between_run_noise,
    kept_rounds,
    run_conditions,
    same_settings,
)
from workbench.judge.few_rounds import few_verdict
from workbench.judge.pair_rows import PAIR_COLUMNS as PAIR_COLUMNS
from workbench.judge.pair_rows import _few_rounds, _ids, _paired_rounds, _same_row, baseline_pairs, row_times
from workbench.judge.verdicts import parse_samples  # noqa: F401 - stats_compare.parse_samples, as before

if TYPE_CHECKING:  # pandas loads only for tables: a sweep judges its undecided pairs on plain rows
    import pandas as pd

#: Columns that identify a measured cell (the contract's cell_key, spelled out).
CELL_COLUMNS = ("kernel", "variant", "backend", "dtype", "params", "mode", "cache")
VERDICTS = vd.VERDICTS

#: What every speed-up table carries per cell (see :class:`workbench.judge.verdicts.Verdict`), plus the
#: times compared (median of each side's values) and whether either row was flagged noisy. ``coverage`` is
#: the interval's (0.95); ``settle`` says what would settle an inconclusive verdict.
RESULT_COLUMNS = ["speedup", "ci_low", "ci_high", "coverage", "floor", "noise", "verdict", "settle", "basis",
                  "n_a", "n_b", "median_a", "median_b", "noisy"]


class PairResult(TypedDict):
    """One judged pair as the :data:`RESULT_COLUMNS` of a table (basis None: the pair was not comparable)."""

    speedup: float
    ci_low: float
    ci_high: float
    coverage: float
    floor: float
    noise: float
    verdict: str
    settle: str | None
    basis: str | None
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    noisy: bool


def _result(v: vd.Verdict, a: np.ndarray, b: np.ndarray, row_a: Any, row_b: Any) -> PairResult:
    """The verdict's fields, the median time of each side and whether either row was flagged noisy."""
    return PairResult(**v.to_dict(), median_a=vd.median(a) if len(a) else float("nan"),
                      median_b=vd.median(b) if len(b) else float("nan"),
                      noisy=vd.flag(row_a.get("noisy")) or vd.flag(row_b.get("noisy")))


def _not_comparable(status_a: Any, status_b: Any) -> PairResult:
    """A pair one of whose rows has no time: NaN where a verdict has numbers, and both statuses."""
    nan = float("nan")
    return PairResult(speedup=nan, ci_low=nan, ci_high=nan, coverage=nan, floor=nan, noise=nan,
                      verdict=f"not comparable ({status_a} / {status_b})", settle=None, basis=None, n_a=0, n_b=0,
                      median_a=nan, median_b=nan, noisy=False)


def mode_clash(a: Any, b: Any) -> str | None:
    """The verdict of two rows timed in different timing modes (``kernel`` vs ``launch`` ...), or None: a time
    of one mode is never set against a time of another (rows without a mode, stored before it, are judged)."""
    ma, mb = a.get("timing_mode"), b.get("timing_mode")
    if isinstance(ma, str) and isinstance(mb, str) and ma != mb:
        return f"not compared (timing modes {ma} / {mb})"
    return None


# -- tables -----------------------------------------------------------------------------------

def _check_runs(df: pd.DataFrame, run_ids: Iterable[str]) -> None:
    known = list(dict.fromkeys(df["run_id"])) if "run_id" in df else []
    missing = [r for r in run_ids if r not in known]
    if missing:
        raise ValueError(f"unknown run id(s) {missing}; valid run ids: {', '.join(map(str, known)) or '(none)'}")


def _judged_times(merged: pd.DataFrame) -> tuple[dict[Any, BothTimes], dict[Any, BothTimes], Probes]:
    """Both runs' times of each comparable cell (ok on both sides, one timing mode) as measured, and as judged:
    for cells of one machine, at one memory bandwidth for memory-bound cells past the cache, at the host's speed
    for CPU cells whose workers probed it (:meth:`SpeedProbes.shifted`), at one speed for the rest (each side over
    its rounds' speed probes); with the three probes' summaries."""
    times: dict[Any, BothTimes] = {}
    probes: dict[Any, tuple[np.ndarray, np.ndarray]] = {}  # cells measured on one machine in both runs
    bandwidth: dict[Any, tuple[np.ndarray, np.ndarray]] = {}  # of them, memory-bound ones past the LLC
    host: dict[Any, tuple[np.ndarray, np.ndarray]] = {}  # of the rest, CPU cells with their workers' host probes
    for i, r in merged.iterrows():
        if r["status_a"] == Status.OK and r["status_b"] == Status.OK and not mode_clash(_side(r, "a"),
                                                                                       _side(r, "b")):
            raw = (row_times(_side(r, "a")), row_times(_side(r, "b")))
            masks = (at_speed(r, "a"), at_speed(r, "b"))  # rounds the slow host stretched left out, as the headline
            times[i], _ = kept_rounds(raw, masks, None)
            if not SpeedProbes.one_machine(r):
                continue
            if (per_byte := SpeedProbes.bandwidth_pair(r)) is not None:
                bandwidth[i] = kept_rounds(raw, masks, per_byte)[1]
            elif (host_probes := SpeedProbes.host_pair(r)) is not None:
                host[i] = kept_rounds(raw, masks, host_probes)[1]
            else:
                probes[i] = kept_rounds(raw, masks, (SpeedProbes.read(r, "a"), SpeedProbes.read(r, "b")))[1]
    p = Probes(SpeedProbes.of(probes.values()), SpeedProbes.of(bandwidth.values()), SpeedProbes.of(host.values()))
    judged = {i: p.memory.adjusted(t, bandwidth[i]) if i in bandwidth
              else p.host.shifted(t) if i in host else p.speed.adjusted(t, probes.get(i)) for i, t in times.items()}
    return times, judged, p


def compare_runs(df: pd.DataFrame, run_a: str, run_b: str, **kw: Any) -> pd.DataFrame:
    """Per matched cell of two runs: speed-up of run B over run A, its interval and a calibrated verdict.

    Cells match on kernel, variant, backend, dtype, params, mode and cache. When a run holds the same
    cell from several machines (merged imports), the environment (machine) joins the key so machines are
    compared like for like. Each cell is judged by :func:`workbench.judge.verdicts.unpaired_verdict` on its
    per-round medians (or one stream's samples), each side as the standard error of its median, with the
    run-to-run noise the cells' rounds do not explain, measured across the matched
    cells judged on rounds (:func:`workbench.judge.between_runs.between_run_noise`) whose settings did not change
    (:func:`~workbench.judge.between_runs.same_settings`; all of them where none stayed); that noise is in
    ``table.attrs["run_noise"]``, and (cells it was measured on, cells left out) in ``table.attrs["noise_cells"]``.
    ``kw`` goes to the verdict (``min_effect``, ``k``, ``confidence`` ...).
    """
    import pandas as pd

    _check_runs(df, [run_a, run_b])
    a, b = df[df["run_id"] == run_a], df[df["run_id"] == run_b]
    key = list(CELL_COLUMNS)
    if any(x.duplicated(key).any() for x in (a, b)):
        key += [c for c in ("env_id", "device") if c in df][:1]
    merged = a.merge(b, on=key, suffixes=("_a", "_b"))
    times, judged, probes = _judged_times(merged)
    # the noise between the runs is measured on the cells whose recorded settings did not change (a cell on other
    # thread pools or another device is what the comparison is about); all cells where none stayed the same
    same = same_settings(merged)
    calibrating = [i for i in judged if same[i]] or list(judged)
    judged, run_noise, probes, probes_unused = _run_noise(times, judged, probes, calibrating)
    rows, modes_differ = [], 0
    for i, r in merged.iterrows():
        rec = {k: r[k] for k in key}
        if i in times:
            (ta, ra), (tb, rb) = judged[i]
            v = vd.unpaired_verdict(ta, tb, run_noise=run_noise, rounds=ra and rb, median_errors=True, **kw)
            rec.update(_result(v, times[i][0][0], times[i][1][0], _side(r, "a"), _side(r, "b")))
        else:
            rec.update(_not_comparable(r["status_a"], r["status_b"]))
            clash = mode_clash(_side(r, "a"), _side(r, "b"))
            rec["verdict"] = clash or rec["verdict"]
            modes_differ += clash is not None
        for side in ("a", "b"):
            rec[f"status_{side}"] = r[f"status_{side}"]
            rec[f"device_{side}"] = r.get(f"device_{side}", r.get("device"))
            rec[f"env_{side}"] = r.get(f"env_id_{side}", r.get("env_id"))
        rec["size"], rec["size_label"] = r.get("size_a"), r.get("size_label_a")
        rows.append(rec)
    extra = ["status_a", "status_b", "device_a", "device_b", "env_a", "env_b", "size", "size_label"]
    table = pd.DataFrame(rows, columns=key + RESULT_COLUMNS + extra)
    table.attrs["run_noise"] = run_noise
    table.attrs["noise_cells"] = (len(calibrating), len(judged) - len(calibrating))
    table.attrs["probes_unused"] = probes_unused
    table.attrs["anchored"] = anchor(table, a, b, key, **kw)  # a variant against its baseline in both runs
    table.attrs["speed_drift"], table.attrs["speed_scatter"] = probes.speed.drift, probes.speed.scatter
    table.attrs["bandwidth_drift"] = probes.memory.drift
    table.attrs["host_drift"], table.attrs["host_scatter"] = probes.host.drift, probes.host.scatter
    table.attrs["conditions"] = run_conditions(a, b)
    table.attrs["timing_modes"] = (f"{modes_differ} cell(s) not compared: the two runs timed them in different "
                                   "timing modes" if modes_differ else None)
    return table


class Probes(NamedTuple):
    """The three probes two runs are judged over: the sweep's speed probe, the host's memory bandwidth, and the
    host probes the CPU cells' workers timed around their rounds."""

    speed: SpeedProbes
    memory: SpeedProbes
    host: SpeedProbes


_UNUSED = Probes(SpeedProbes(None, None), SpeedProbes(None, None), SpeedProbes(None, None))


def _run_noise(times: dict[Any, BothTimes], judged: dict[Any, BothTimes], probes: Probes,
               calibrating: list[Any]) -> tuple[dict[Any, BothTimes], float, Probes, str | None]:
    """The run-to-run noise measured on the ``calibrating`` cells, at one speed where the probes help, as measured
    where judging over the probes widens it: (times judged, noise, the probes, why the probes were not used or
    None)."""
    run_noise = _between_run_noise(judged[i] for i in calibrating)
    probed = any(judged[i] is not t for i, t in times.items())
    if probed and (as_measured := _between_run_noise(times[i] for i in calibrating)) < run_noise:
        # the probes moved unlike the cells (a power pair's probe read 22% faster while its cells moved 0-8%):
        # dividing by them would add their own scatter; chosen across all cells by the noise, never by an effect
        why = (f"the probes' drift between the runs ({_drift_text(probes)}) did not follow the cells' "
               f"(run-to-run noise {100 * run_noise:.1f}% judged over them, {100 * as_measured:.1f}% as measured): "
               "cells are judged as measured")
        return dict(times), as_measured, _UNUSED, why
    return judged, run_noise, probes, None


def _drift_text(probes: Probes) -> str:
    named = (("speed-probe time", probes.speed), ("bandwidth-probe time", probes.memory),
             ("host-probe time", probes.host))
    parts = [f"{what} {100 * (p.drift - 1):+.1f}%" for what, p in named if p.drift is not None]
    return ", ".join(parts) or "none"


def _between_run_noise(judged: Iterable[BothTimes]) -> float:
    """The two runs' noise beyond their cells' own rounds (:func:`workbench.judge.between_runs.between_run_noise`),
    from the cells judged on rounds on both sides."""
    ratios, errors = [], []
    for (ta, ra), (tb, rb) in judged:
        la, lb = np.log(vd.clean(ta)), np.log(vd.clean(tb))
        if not (ra and rb) or min(len(la), len(lb)) < vd.MIN_ROUNDS:
            continue
        ratios.append(vd.median(la) - vd.median(lb))
        errors.append(math.hypot(vd.median_error(la), vd.median_error(lb)))
    return between_run_noise(ratios, errors)


def _side(r: pd.Series, side: str) -> RowDict:
    """One run's columns of a merged row, without their suffix."""
    cols = ("samples_s", "round_medians_s", "noisy", "timing_mode")
    return {c: r.get(f"{c}_{side}", r.get(c)) for c in cols}


def block_effects(base: Any, row: Any) -> np.ndarray | None:
    """The row's per-visit effects against ``base`` from blocks timed alternately in the same visits
    (:data:`workbench.judge.verdicts.PAIR_D`), when the row was timed beside ``base``'s cell in at least
    MIN_ROUNDS visits; else None."""
    key = base.get("cell_key")
    if key is None or row.get(vd.PAIR_WITH) != key:
        return None
    d = vd.effects(row.get(vd.PAIR_D))
    return d if len(d) >= vd.MIN_ROUNDS else None


def judge_pair(base: pd.Series | RowDict, row: pd.Series | RowDict,
               typical: float | Callable[[str], float | None] | None = None, **kw: Any) -> PairResult:
    """A row against its baseline row of the same run: on the effects of blocks timed alternately with the
    baseline in the same visits when it has them (:func:`block_effects`); else paired round by round when
    both have the same number (≥ MIN_ROUNDS) of round medians (``typical``: the typical paired spread of the
    pair's scope in the run, see :func:`workbench.judge.verdicts.paired_noise`, or a function of the basis that
    gives it: ``vd.BLOCKS`` or "paired rounds"); where the slow host left fewer than MIN_ROUNDS shared rounds at
    speed, on those (:func:`workbench.judge.few_rounds.few_verdict`); else unpaired (round medians, or one stream's
    samples)."""
    clash = mode_clash(base, row)
    if clash:
        return {**_not_comparable(base.get("status"), row.get("status")), "verdict": clash}
    a, b, paired = _paired_rounds(base, row)
    d = block_effects(base, row)
    few = None if d is not None or paired else _few_rounds(base, row)
    if callable(typical):
        typical = typical(vd.BLOCKS if d is not None else "paired rounds")
    if d is not None:
        v = vd.effects_verdict(d, typical=typical, basis=vd.BLOCKS, **kw)
    elif paired:
        v = vd.paired_verdict(a, b, typical=typical, **kw)
    elif few is not None:
        v, a, b = few_verdict(few, typical, **kw)
    else:
        v = vd.unpaired_verdict(a, b, rounds=row_times(base)[1] and row_times(row)[1], **kw)
    return _result(v, a, b, base, row)


def speedup_vs_baseline(df: pd.DataFrame, baseline_variant: str | None = None, baseline_backend: str | None = None,
                        **kw: Any) -> pd.DataFrame:
    """Speed-up of every ok row against a baseline cell of the same run, kernel, dtype, size and cache.

    The baseline is ``baseline_variant`` (on ``baseline_backend`` if given); with
    only a backend, the same variant on that backend; with neither, the kernel's
    library variant as its rows say (see :func:`library_variants`). Among several candidate
    baseline rows the one on the row's own backend wins, so numpy variants compare with the numpy library call and
    torch ones with torch. Each pair is judged by :func:`judge_pair` on its own rounds, its noise moderated
    by the typical spread of the paired differences nearest it in the run (:func:`typical_spreads`), so a
    disturbed cell elsewhere does not widen its interval; ``kw`` goes to the verdict.
    Rows without a baseline get NaN and verdict "no baseline"; the baseline row itself "baseline".
    """
    import pandas as pd

    cols = ["run_id", "kernel", "variant", "backend", "dtype", "params", "size", "size_label", "mode", "cache",
            "baseline_variant", "baseline_backend"] + RESULT_COLUMNS
    if df.empty:
        return pd.DataFrame(columns=cols)
    if kw:  # verdict settings other than the defaults: one pair at a time
        return _speedups_one_by_one(df, baseline_variant, baseline_backend, cols, **kw)
    ok = where_rows(df, df["status"] == Status.OK)
    libs = {k: library_variants(df, k) for k in ok["kernel"].unique()}
    blocks = _run_blocks(ok)
    if len(blocks) > 1:  # pairs and typical spreads never reach across runs: judged run by run (a kernel's
        # 200,000 rows of 100 runs held every row's parsed times at once)
        parts = [_judged(take_rows(ok, b), baseline_variant, baseline_backend, cols, libs) for b in blocks]
        return pd.concat(parts, ignore_index=True)
    return _judged(ok, baseline_variant, baseline_backend, cols, libs)


def speedups_by_kernel(df: pd.DataFrame, baseline_variant: str | None = None,
                       baseline_backend: str | None = None) -> pd.DataFrame:
    """:func:`speedup_vs_baseline` one kernel at a time, as the report judges them: a pair's noise is moderated
    by typical spreads of its own kernel only (never of the run's other kernels), so ``workbench compare`` and
    the report give one pair one interval."""
    import pandas as pd

    if df.empty or "kernel" not in df:
        return speedup_vs_baseline(df, baseline_variant, baseline_backend)
    parts = [speedup_vs_baseline(where_rows(df, df["kernel"] == k), baseline_variant, baseline_backend)
             for k in dict.fromkeys(df["kernel"])]
    return pd.concat(parts, ignore_index=True)


#: Rows judged at a time (whole runs): enough that a block's fixed cost is small, few enough that a block's
#: parsed times are.
JUDGE_ROWS = 20_000


def _run_blocks(ok: pd.DataFrame) -> list[np.ndarray]:
    """The positions of each run's rows when every run's rows are consecutive (so judging them run by run
    gives the rows in the order judging all at once does); else one block of every row."""
    if "run_id" not in ok or len(ok) < 2:
        return [np.arange(len(ok))]
    import pandas as pd

    codes, _ = pd.factorize(ok["run_id"], use_na_sentinel=True)
    starts = np.flatnonzero(np.diff(codes)) + 1
    if len(starts) + 1 != codes.max() + 1 or (codes < 0).any():  # a run's rows apart, or rows without a run
        return [np.arange(len(ok))]
    blocks, begin = [], 0  # whole runs, at least JUDGE_ROWS rows a block (each block has a fixed cost)
    for end in [*starts.tolist(), len(ok)]:
        if end - begin >= JUDGE_ROWS or end == len(ok):
            blocks.append(np.arange(begin, end))
            begin = end
    return blocks


def _judged(ok: pd.DataFrame, baseline_variant: str | None, baseline_backend: str | None, cols: list[str],
            libs: dict[Any, list[str]]) -> pd.DataFrame:
    """:func:`speedup_vs_baseline` of ok rows (``libs``: each kernel's library variants, as all its rows say)."""
    import pandas as pd

    positions, machine = pair_positions(ok, baseline_variant, baseline_backend, libs)
    column = _column_reader(ok)
    rows = judge_many.Rows(column)
    labels = ok.index.tolist()
    machine_values = list(zip(*(column(c) for c in machine), strict=True)) if machine else [()] * len(ok)
    cell = list(zip(*(column(c) for c in ("kernel", "dtype", "params", "cache")), strict=True))
    scope_keys = [(run + c, run + c[:1], run) for run, c in zip(machine_values, cell, strict=True)]
    verdicts = judge_many.judge(rows, positions, scope_keys, labels)
    order = [i for i, _ in positions]
    out: dict[str, list[Any]] = {c: [column(c)[i] for i in order] for c in cols[:10]}
    has_base = [j is not None for _, j in positions]
    variants, backends = column("variant"), column("backend")
    out["baseline_variant"] = [variants[j] if j is not None else None for _, j in positions]
    out["baseline_backend"] = [backends[j] if j is not None else None for _, j in positions]
    nan = float("nan")
    empty = {c: nan for c in RESULT_COLUMNS} | {"verdict": "no baseline", "basis": None, "noisy": False,
                                                 "settle": nan, "n_a": nan, "n_b": nan}
    for c in RESULT_COLUMNS:
        judged = iter(verdicts[c])
        out[c] = [next(judged) if has else empty[c] for has in has_base]
    modes = column("timing_mode") if "timing_mode" in ok else [None] * len(ok)
    for k, (i, j) in enumerate(positions):
        if j is not None and (i == j or labels[i] == labels[j]):
            out["verdict"][k] = "baseline"
        elif j is not None and (clash := mode_clash({"timing_mode": modes[j]}, {"timing_mode": modes[i]})):
            out["verdict"][k], out["speedup"][k] = clash, nan
    return pd.DataFrame(out, columns=cols)


def _column_reader(df: pd.DataFrame) -> Callable[[str], list[Any]]:
    """``name -> df[name]`` as a list of plain values (None for a column ``df`` lacks), each read once."""
    cache: dict[str, list[Any]] = {}

    def column(name: str) -> list[Any]:
        if name not in cache:
            cache[name] = column_values(df[name]) if name in df.columns else [None] * len(df)
        return cache[name]

    return column


def _speedups_one_by_one(df: pd.DataFrame, baseline_variant: str | None, baseline_backend: str | None,
                         cols: list[str], **kw: Any) -> pd.DataFrame:
    """:func:`speedup_vs_baseline`, each pair judged alone by :func:`judge_pair` (``kw`` to the verdict)."""
    import pandas as pd

    pairs, machine = baseline_pairs(df, baseline_variant, baseline_backend)
    typical = typical_spreads(pairs, machine)
    out = []
    for row, base in pairs:
        rec = {c: row.get(c) for c in cols[:10]}
        if base is None:
            rec.update({c: float("nan") for c in RESULT_COLUMNS}, verdict="no baseline", basis=None,
                       noisy=False, baseline_variant=None, baseline_backend=None)
        else:
            rec.update(judge_pair(base, row, partial(typical, row), **kw),
                       baseline_variant=base["variant"],
                       baseline_backend=base["backend"])
            if base.name == row.name:
                rec["verdict"] = "baseline"
        out.append(rec)
    return pd.DataFrame(out, columns=cols)


def undecided_pairs(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(cell_key of the row, cell_key of its baseline) of every pair of ``rows`` (one run's stored rows, as a
    sweep holds them) that :func:`speedup_vs_baseline` calls inconclusive with its default baselines: the
    pairs an extra round could settle (:class:`workbench.sweep.plan.SweepPlan`). On plain rows, without
    pandas (a sweep asks between rounds; importing pandas took 5-6 s at load 20)."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("status") == Status.OK:
            groups.setdefault(tuple(str(r.get(c)) for c in ("kernel", "dtype", "params", "cache")), []).append(r)
    pairs: list[tuple[Any, Any]] = []
    for g in groups.values():  # the library variants of the group (one per backend), as library_variants says
        libs = [r for r in g if vd.flag(r.get("library"))] or g[:1]
        for r in g:
            same = [b for b in libs if b.get("backend") == r.get("backend")]
            pairs.append((r, (same or sorted(libs, key=lambda b: str(b.get("backend"))))[0]))
    typical = typical_spreads(pairs, [])
    return [(str(row.get("cell_key")), str(base.get("cell_key"))) for row, base in pairs
            if not _same_row(row, base)
            and (_paired_rounds(base, row)[2] or block_effects(base, row) is not None)
            and judge_pair(base, row, partial(typical, row))["verdict"] == "inconclusive"]


def twin_times(row: pd.Series | RowDict) -> tuple[np.ndarray, np.ndarray] | None:
    """A reference row's round medians and its A/A twin's, on the rounds both were measured in; None when
    the row has no twin (or fewer than MIN_ROUNDS twin rounds)."""
    twin = parse_samples(row.get(vd.TWIN_MEDIANS))
    if len(twin) < vd.MIN_ROUNDS:
        return None
    a, is_rounds = row_times(row)
    if not is_rounds:
        return None
    # the reference's rounds set aside (taken while the host ran slow) pair with none, as in the batch path
    return vd.aligned(a, _ids(row, a), twin, vd.round_ids(row.get(vd.TWIN_IDS)))


def twin_block_effects(row: Any) -> np.ndarray | None:
    """A reference's A/A twin's per-visit effects, timed beside the reference itself in alternating blocks
    (:data:`workbench.judge.verdicts.TWIN_PAIR_D`); None with fewer than MIN_ROUNDS."""
    d = vd.effects(row.get(vd.TWIN_PAIR_D))
    return d if len(d) >= vd.MIN_ROUNDS else None


def aa_twins(df: pd.DataFrame) -> pd.DataFrame:
    """The A/A twin of every reference row that has one: the reference against itself, judged exactly as
    :func:`speedup_vs_baseline` judges a variant (paired rounds, the same typical spreads). Identical code:
    the verdict should be "same", and the interval shows how small a difference this run could see.
    Columns: the cell's (kernel, variant, backend, dtype, params, size, size_label, mode, cache) and
    :data:`RESULT_COLUMNS`."""
    import pandas as pd

    cols = ["run_id", "kernel", "variant", "backend", "dtype", "params", "size", "size_label", "mode", "cache"]
    if df.empty or vd.TWIN_MEDIANS not in df:
        return pd.DataFrame(columns=cols + RESULT_COLUMNS)
    pairs, machine = baseline_pairs(df)
    typical = typical_spreads(pairs, machine)
    out = []
    for row, _ in pairs:
        both = twin_times(row)
        if both is None:
            continue
        d = twin_block_effects(row)
        v = (vd.paired_verdict(both[0], both[1], typical=typical(row, "paired rounds")) if d is None
             else vd.effects_verdict(d, typical=typical(row, vd.BLOCKS), basis=vd.BLOCKS))
        out.append({c: row.get(c) for c in cols} | _result(v, both[0], both[1], row, row))
    return pd.DataFrame(out, columns=cols + RESULT_COLUMNS)


def aa_summary(df: pd.DataFrame) -> str | None:
    """One sentence on a run's A/A twins for a report or ``workbench compare``, or None without twins:
    how many were called faster or slower (identical code: each one a false call), and the floor they
    showed (the smallest difference this run's paired verdicts could see)."""
    t = aa_twins(df)
    if t.empty:
        return None
    called = int(t["verdict"].isin(["faster", "slower"]).sum())
    same = int((t["verdict"] == "same").sum())
    floor = float(np.nanmedian(t["floor"].astype(float))) if t["floor"].notna().any() else float("nan")
    worst = float(np.nanmax(t["floor"].astype(float))) if t["floor"].notna().any() else float("nan")
    how = ("timed a second time per round beside itself, in alternating blocks as its contenders are"
           if (t["basis"] == vd.BLOCKS).any() else "measured twice per round, interleaved with its contenders")
    return (f"A/A twin (each reference {how}): "
            f"{called} of {len(t)} called faster or slower, {same} same; it could see ±{vd.pct(floor)} "
            f"(median; worst ±{vd.pct(worst)}): differences smaller than that are not resolved in this run")


#: How many paired comparisons a scope needs for their typical spread to stand for its pairs' (a median of
#: 3 stays put when one is disturbed): the cell's group (kernel, size, dtype: contenders measured back to
#: back, sharing the reference's rounds), else its kernel, else the whole run (and machine).
MIN_SCOPE_PAIRS = 3


def typical_spreads(pairs: list[tuple[pd.Series, pd.Series | None]], machine: list[str]) -> Any:
    """A function row -> the prior of its pair's spread (:func:`workbench.judge.verdicts.paired_noise`): the
    smallest typical spread (:func:`workbench.judge.verdicts.prior_noise`) among its group (kernel, size and
    dtype in its run), its kernel and the run that hold :data:`MIN_SCOPE_PAIRS` pairs (with none that do,
    the run's); None when the run has no paired rows.

    Under load the small sizes stay quiet while large ones are disturbed, and one disturbed reference
    round shifts every pair of its group alike: a wider scope's typical spread would blunt quiet cells with
    the others' noise, a narrower one a group's shared hiccup. A cell that was itself disturbed still gets
    a wide interval from its own spread. Measured (tests/perf/power.py, docs/statistics.md): group alone or
    kernel alone called fewer known gaps, with the same A/A rate.

    Block pairs (:data:`workbench.judge.verdicts.BLOCKS`) take the nearest scope that holds enough pairs instead:
    their noise is what differs within a visit (the arrays' placement, clean samples being rare for
    millisecond calls on a busy machine), which grows with the group's size, and the quiet small sizes'
    spread made a 1M-element group's A/A twin and a +10% variant read "faster" (tests/perf/power.py, load 12).
    """
    scopes: dict[tuple, list[np.ndarray]] = {}

    def keys(row: pd.Series, basis: str) -> list[tuple]:
        run = (basis,) + tuple(row.get(c) for c in machine)
        kernel = run + (row.get("kernel"),)
        return [kernel + tuple(row.get(c) for c in ("dtype", "params", "cache")), kernel, run]

    def add(row: pd.Series, basis: str, d: np.ndarray) -> None:
        for key in keys(row, basis):
            scopes.setdefault(key, []).append(d)

    for row, base in pairs:
        if base is not None and not _same_row(base, row):
            d = block_effects(base, row)
            a, b, paired = _paired_rounds(base, row)
            if d is not None:
                add(row, vd.BLOCKS, d)
            elif paired:
                add(row, "paired rounds", np.log(a) - np.log(b))
        twin = twin_times(row)  # an A/A twin is the cleanest paired spread of its group: its true effect is 0
        d = twin_block_effects(row)
        if d is not None:
            add(row, vd.BLOCKS, d)
        elif twin is not None:
            add(row, "paired rounds", np.log(twin[0]) - np.log(twin[1]))

    priors: dict[tuple, float | None] = {}

    def prior(key: tuple) -> float | None:
        if key not in priors:
            priors[key] = vd.prior_noise(scopes[key])
        return priors[key]

    def typical(row: pd.Series, basis: str = "paired rounds") -> float | None:
        found = [k for k in keys(row, basis) if k in scopes]
        enough = [p for k in found if len(scopes[k]) >= MIN_SCOPE_PAIRS and (p := prior(k)) is not None]
        if basis == vd.BLOCKS and enough:  # the nearest scope: block pairs of one group share its noise
            return enough[0]
        return min(enough) if enough else (prior(found[-1]) if found else None)

    return typical

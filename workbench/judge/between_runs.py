"""What two runs of one suite share and what they do not: the machine's speed as each round started, and the
conditions their rows recorded. ``compare`` judges a cell at one speed where the machine drifted and says
where the runs' conditions differ, beside its verdicts (:func:`workbench.judge.compare.compare_runs`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from workbench.judge import verdicts as vd
from workbench.judge.dips import rounds_kept
from workbench.judge.verdicts import MIN_CELLS, MIN_EFFECT, STREAM_NOISE, median, parse_samples

if TYPE_CHECKING:
    import pandas as pd

#: The least run-to-run noise (log sigma) a comparison between runs assumes, however well the cells' rounds
#: explain the scatter between the runs: on a quiet 2-core VM, 1-3% between runs is what careful tools reach.
RUN_NOISE_MIN = 0.01
#: A speed probe's drift between two runs is used only beyond this many standard errors of the probes' own
#: round-to-round scatter. The probe is a few milliseconds of one loop in the sweep's process, on whichever core
#: that runs; between two idle runs of one code (2026-12-07, arrays placed) it read +3.1% (its rounds within
#: ±1.4%) while the cells moved -1.1% at the median: judged over it, 44% of the cache-resident cells repeated
#: within 5% instead of 86%; a power pair's probe read +6.6% from three rounds scattered ±4% and made every
#: unchanged cell 6-27% "faster".
PROBE_K = 3.0
#: (quantile, standard normal's value there) at which :func:`between_run_noise` makes the cells' scaled
#: deviations match a normal's: the 80th percentile, 1.2816.
CALIBRATION_QUANTILE = (0.8, 1.2816)


def between_run_noise(log_ratios: Iterable[float], median_errors: Iterable[float]) -> float:
    """Run-to-run noise (log sigma) of two runs beyond what each cell's own rounds explain, for
    :func:`~workbench.judge.verdicts.unpaired_verdict` with ``median_errors``.

    Each cell's log(time A / time B) is the runs' common shift, plus its own rounds' error (``median_errors``, one
    per cell: :func:`~workbench.judge.verdicts.median_error` of both sides, combined), plus an excess ``tau`` common
    to all cells (what a cell cannot see from inside its run: the host between the runs). ``tau`` is the value at
    which the cells' deviations from the shift, each over its own noise, have the 80th-percentile size of a standard
    normal's (:data:`CALIBRATION_QUANTILE`): robust to the few cells a real change moves, and to the heavier tails
    of rounds taken beside a busy core (calibrated at the median, 12% of the identical cells of one such pair were
    called faster). A common shift smaller than the smallest effect a verdict names
    (:data:`~workbench.judge.verdicts.MIN_EFFECT`) is the host's drift and counts as noise; a larger one stays a
    finding (every cell slower by the same 15% is seen). The result is at least :data:`RUN_NOISE_MIN`.
    Re-judged on six stored pairs of identical quick-suite runs (102 cells each, idle and with a core busy),
    against the spread of one round counted on top of the scatter across cells: floor median ±49-108% ->
    ±9-53%, identical cells called faster or slower 0% -> 0-4.9% (docs/statistics.md).
    With fewer than :data:`~workbench.judge.verdicts.MIN_CELLS` cells,
    :data:`~workbench.judge.verdicts.STREAM_NOISE` stands in."""
    r, se = np.asarray(list(log_ratios), float), np.asarray(list(median_errors), float)
    ok = np.isfinite(r) & np.isfinite(se)
    r, se = r[ok], np.maximum(se[ok], 1e-6)
    if len(r) < MIN_CELLS:
        return STREAM_NOISE
    shift = median(r)
    dev = np.abs(r - shift)
    q, z = CALIBRATION_QUANTILE

    def excess(tau: float) -> float:
        return float(np.quantile(dev / np.sqrt(se ** 2 + tau ** 2), q)) - z

    lo, hi = 0.0, float(dev.max()) * 10 + 1.0
    if excess(lo) > 0:
        for _ in range(60):  # bisection: the scaled deviations shrink as tau grows
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    drift = shift if abs(shift) <= math.log1p(MIN_EFFECT) else 0.0
    return max(math.hypot(lo, drift), RUN_NOISE_MIN)


#: Both runs' times of a cell as :func:`row_times` gives them: (times, whether round medians) for A, then B.
BothTimes = tuple[tuple[np.ndarray, bool], tuple[np.ndarray, bool]]


class SpeedProbes:
    """The machine's speed probes of two runs' rounds (:mod:`workbench.measure.speed_probe`), and the cells
    judged at one speed: each side's round medians divided by the median of its rounds' probes (times run A's
    median probe, to keep seconds), for cells measured on one machine in both runs with a probe for every round.
    A host that drifted between the runs (our VMs: 4-6% in minutes) then reads as the drift it is, not as every
    kernel."""

    def __init__(self, reference: float | None, drift: float | None, scatter: float | None = None) -> None:
        #: Run A's median probe (seconds); None when the runs have no probes to judge by, or their drift is
        #: within the probes' own scatter (``scatter`` is then set).
        self.reference = reference
        #: Run B's median probe over run A's (1.05: the machine ran 5% slower in B); None without probes.
        self.drift = drift
        #: Where the drift was not used: the standard error of its log from the probes' own round-to-round scatter.
        self.scatter = scatter

    @staticmethod
    def read(r: pd.Series, side: str) -> np.ndarray:
        """One side's round probes of a merged row."""
        return parse_samples(r.get(f"round_probes_s_{side}", r.get("round_probes_s")))

    @staticmethod
    def bandwidth_pair(r: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
        """Both sides' round bandwidth probes of a memory-bound cell as seconds a byte (1 / GB/s), where both runs
        probed the host's bandwidth for its rounds (its working set is past the last-level cache); else None.
        Such a cell's time follows the memory bus, not the core's speed: divided by these it is a time at one
        bandwidth, as a cache-resident time is by its speed probe."""
        if r.get("bound_a", r.get("bound")) != "memory-bound":
            return None
        a, b = SpeedProbes.per_byte(r, "a"), SpeedProbes.per_byte(r, "b")
        return (a, b) if len(a) and len(b) else None

    @staticmethod
    def per_byte(r: pd.Series, side: str) -> np.ndarray:
        """One side's round bandwidth probes (of a merged row; of a plain row with ``side`` "") as seconds a byte
        (1 / GB/s); empty where it has none, or one is not positive."""
        g = parse_samples(r.get(f"round_bandwidth_gbs_{side}", r.get("round_bandwidth_gbs")))
        return 1.0 / g if len(g) and (g > 0).all() else np.array([])

    @staticmethod
    def host_pair(r: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
        """Both sides' host probes of a CPU cell (``round_host_probes_s``: a fixed loop timed by the cell's own
        worker on its own core right around each round, :mod:`workbench.measure.host_settle`), where both sides
        have one for every round; else None."""
        sides = []
        for side in ("a", "b"):
            p = parse_samples(r.get(f"round_host_probes_s_{side}", r.get("round_host_probes_s")))
            rounds = parse_samples(r.get(f"round_medians_s_{side}", r.get("round_medians_s")))
            if not len(p) or len(p) != len(rounds) or not (p > 0).all():
                return None
            sides.append(p)
        return sides[0], sides[1]

    @staticmethod
    def one_machine(r: pd.Series) -> bool:
        env_a, env_b = r.get("env_id_a", r.get("env_id")), r.get("env_id_b", r.get("env_id"))
        return env_a is not None and env_a == env_b

    @classmethod
    def of(cls, probes: Iterable[tuple[np.ndarray, np.ndarray]]) -> SpeedProbes:
        """The runs' probes, over the cells both measured on one machine (:meth:`one_machine`)."""
        pa, pb = [], []
        for a, b in probes:
            pa.extend(a)
            pb.extend(b)
        if not pa or not pb:
            return cls(None, None)
        ref = float(np.median(pa))
        drift = float(np.median(pb)) / ref
        se = cls.drift_error(pa, pb)
        if se is not None and abs(math.log(drift)) < PROBE_K * se:
            return cls(None, drift, se)
        return cls(ref, drift)

    @staticmethod
    def drift_error(pa: Iterable[float], pb: Iterable[float]) -> float | None:
        """The standard error of log(drift) from each run's distinct round probes (a round's probe repeats on every
        cell of the round): 1.2533 x sigma / sqrt(rounds) for each run's median, added in quadrature; None where a
        run has fewer than 2 rounds' probes."""
        parts = []
        for p in (pa, pb):
            logs = np.log(np.unique(np.asarray(list(p), dtype=float)))
            if len(logs) < 2:
                return None
            parts.append(1.2533 * float(np.std(logs, ddof=1)) / math.sqrt(len(logs)))
        return math.hypot(*parts)

    def adjusted(self, both: BothTimes, probes: tuple[np.ndarray, np.ndarray] | None) -> BothTimes:
        """Both sides' times at run A's speed, where the cell ran on one machine and both sides have a probe per
        round median; else as measured.

        Each side is divided by the median of its rounds' probes, not each round by its own probe: a round's probe
        is a few milliseconds of one fixed loop, and its own round-to-round scatter does not follow the cells'
        (measured: a first-round probe 5% faster than the next two while the cells were not, so dividing round
        by round made every cell's first round 5% slower and tripled the median cell's standard error between
        two idle runs, 5.1% -> 14.8%). The probes' median still carries the host's drift between the runs."""
        (ta, ra), (tb, rb) = both
        if self.reference is None or probes is None or not (ra and rb):
            return both
        pa, pb = probes
        if len(pa) != len(ta) or len(pb) != len(tb):
            return both
        return (ta / float(np.median(pa)) * self.reference, ra), (tb / float(np.median(pb)) * self.reference, rb)

    def shifted(self, both: BothTimes) -> BothTimes:
        """Both sides' times with run B's divided by the runs' :attr:`drift` (run A's as measured), where it is
        used; else as measured. For the host probes: each cell's own probes are a few windows of 2 ms, whose
        scatter would be divided into the cell, while their median over a run's hundreds of rounds is the host's
        speed in that run (an idle pair of 2026-12-07: the workers' probes read a run 14.7% slower at the median
        round, the cells 14.2% at the median cell, while the sweep's probe read it 1.8% faster)."""
        if self.reference is None or self.drift is None:
            return both
        (ta, ra), (tb, rb) = both
        return (ta, ra), (tb / self.drift, rb)


#: Row columns that record, per cell, a setting that moves its time (thread pools, the device it ran on).
SETTING_COLUMNS = ("threads", "device")


def same_settings(merged: pd.DataFrame) -> dict[object, bool]:
    """Per matched cell of two runs (``merged``: both runs' rows side by side, columns suffixed ``_a`` and
    ``_b``), whether its rows recorded the same :data:`SETTING_COLUMNS` in both runs (a side that recorded none
    counts as the same). A cell whose settings differ is a change under test, not a sample of the noise
    between the runs: tutorial 07 pins numba to one thread in run B, and measured around every cell's common
    shift, numba's 0.57x made the noise of all six cells so wide that every verdict, numpy's too, read
    "disturbed". Of the thread pools, a cell's own count (:func:`cell_pools`): a run in one process records
    numba's pool on numpy's rows too."""
    same = {i: True for i in merged.index}
    for col in SETTING_COLUMNS:
        ca, cb = f"{col}_a", f"{col}_b"
        if ca not in merged or cb not in merged:
            continue
        backends = merged["backend"] if "backend" in merged else [""] * len(merged)
        for i, va, vb, backend in zip(merged.index, merged[ca], merged[cb], backends, strict=True):
            if not (isinstance(va, str) and isinstance(vb, str)) or va == vb:
                continue
            if col != "threads" or _pools_differ(row_pools(va, str(backend)), row_pools(vb, str(backend))):
                same[i] = False
    return same


def _pools_differ(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    """Whether a pool both rows name has other counts: a pool one side does not name had not started when that
    row ran (in one process, OpenMP's pool appears once numba's parallel code first runs: tutorial 07's first
    numpy row of run A lacked it, and a numpy cell whose code and threads never changed was left out)."""
    return any(a[k] != b[k] for k in a.keys() & b.keys())


#: Backends whose runtimes run on an OpenMP pool (numba's omp layer, torch's intra-op threads): for the others an
#: ``openmp:...`` pool in the row is another runtime's (tutorial 07 set numba to one thread in run B; in its one
#: process OpenMP's pool read 1, and a numpy cell, which never runs on it, was left out of the noise as changed).
OPENMP_BACKENDS = ("numba", "torch")


def cell_pools(threads: str, backend: str) -> dict[str, str]:
    """The thread pools of one ``threads`` text (``numba 2, blas:openblas 2, torch 2; OpenMP wait: ...``) that
    its own backend runs on: a BLAS pool (``blas:...``), OpenMP's (``openmp:...``) for the backends of
    :data:`OPENMP_BACKENDS`, and the pool named after its backend's runtime (``torch`` for ``torch-cpu``), not
    another runtime's. The text after ``;`` (how threads wait, the allocator) is no pool: the runs' conditions
    name it (:func:`run_conditions`), and it does not decide which cells measure the noise."""
    pools, _, _ = threads.partition(";")
    own = {}
    for part in pools.split(","):
        name, _, count = part.strip().rpartition(" ")
        library = name.startswith("blas:") or (name.startswith("openmp:") and backend.startswith(OPENMP_BACKENDS))
        if name and (library or (":" not in name and backend.startswith(name))):
            own[name] = count
    return own


def row_pools(threads: str, backend: str) -> dict[str, set[str]]:
    """Each pool of a row (:func:`cell_pools`) with every count its rounds recorded: a row whose rounds saw two
    thread texts joins them with " | " (:func:`workbench.measure.rounds.merge_conditions`), and read as one text,
    the second text's pools fell into the part after the first ";" (07, one core busy: a numpy cell whose first
    round ran before numba's pool started was counted as on "other thread pools" and left out of the noise)."""
    out: dict[str, set[str]] = {}
    for text in threads.split(" | "):
        for name, count in cell_pools(text, backend).items():
            out.setdefault(name, set()).add(count)
    return out


def run_conditions(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """Sentences for each way two runs' conditions differ enough to move their times: another machine, a
    load or a share of other processes' CPU that differs (their rows' medians), a backend on another device
    (or graphics API), other thread pools. A
    comparison between such runs says so beside its verdicts (a 44x "change" under load 9 against load 2
    once read as one)."""
    def median(df: pd.DataFrame, col: str) -> float | None:
        values = df[col].dropna() if col in df else []
        return float(np.median(values)) if len(values) else None

    out = []
    envs = [set(x["env_id"].dropna()) if "env_id" in x else set() for x in (a, b)]
    if envs[0] and envs[1] and envs[0] != envs[1]:
        out.append("the runs come from different machines or environments: a verdict compares the machines too")
    la, lb = median(a, "load_avg_1m"), median(b, "load_avg_1m")
    if la is not None and lb is not None and abs(la - lb) >= 1.0:
        out.append(f"the machine's load differed: {la:.1f} in the first run, {lb:.1f} in the second (median of "
                   "the rows' 1-minute load)")
    sa, sb = median(a, "other_cpu_share"), median(b, "other_cpu_share")
    if sa is not None and sb is not None and abs(sa - sb) >= 0.1:
        # a median, said so: 07 printed "67% in the second" beside "up to 80% of the CPU" (a maximum), unlabelled
        out.append(f"other processes took {100 * sa:.0f}% of the CPU in the first run and {100 * sb:.0f}% in the "
                   "second (median over the rows): parallel kernels read slower where a core was taken")
    out += _device_changes(a, b)
    ta = set(a["threads"].dropna()) if "threads" in a else set()
    tb = set(b["threads"].dropna()) if "threads" in b else set()
    if ta and tb and ta.isdisjoint(tb):
        out.append(f"the thread pools differed: {pools_diff(sorted(ta)[0], sorted(tb)[0])}")
    return out


def _parts(threads: str) -> list[str]:
    """A rows' ``threads`` string cut into its settings: the pools (first segment, at ", ") and each later
    "; " segment whole (they carry commas of their own)."""
    head, *rest = threads.split("; ")
    return [*head.split(", "), *rest]


def pools_diff(first: str, second: str) -> str:
    """Two runs' thread settings, only where they differ ("'numba 2' against 'numba 1'"), the settings they share
    counted: 07 quoted both whole strings (48 words) to show one pool's count changed."""
    a, b = _parts(first), _parts(second)
    only_a, only_b = [x for x in a if x not in b], [x for x in b if x not in a]
    if not only_a or not only_b:   # nothing to pair the difference with: both whole
        return f"{first!r} against {second!r}"
    shared = len([x for x in a if x in b])
    return (f"{'; '.join(only_a)!r} against {'; '.join(only_b)!r}"
            + (f" ({shared} other setting{'s' * (shared != 1)} alike)" if shared else ""))


def _device_changes(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """A sentence per backend that ran on other devices in the two runs (wgpu on OpenGL in one run and on
    Vulkan in the other names its device ``… via OpenGL``; a GPU swapped; another CPU): its verdicts compare
    the devices too."""
    if not all(c in x for c in ("backend", "device") for x in (a, b)):
        return []
    da, db = ({str(k): set(map(str, v.dropna())) for k, v in x.groupby("backend")["device"]} for x in (a, b))
    return [f"{backend} ran on {', '.join(sorted(da[backend]))} in the first run and on "
            f"{', '.join(sorted(db[backend]))} in the second: its verdicts compare the devices too"
            for backend in sorted(set(da) & set(db)) if da[backend] and db[backend] and da[backend] != db[backend]]


def at_speed(r: pd.Series, side: str) -> np.ndarray | None:
    """Which of one side's rounds (of a merged row; ``side`` "a" or "b") were taken with the host at speed, as a
    mask over its ``round_medians_s``; None to judge every round as measured: where none was set aside, or too few
    (:data:`~workbench.judge.verdicts.MIN_ROUNDS`) would be left to judge on rounds.

    WHY: a round the slow host stretched (:func:`workbench.judge.dips.host_slow_rounds`: its probe read slow, the
    cell felt it) is left out of the row's headline; judged between runs with it, one such round widened the side's
    standard error as if the kernel had varied."""
    medians = parse_samples(r.get(f"round_medians_s_{side}", r.get("round_medians_s")))
    slowdowns = parse_samples(r.get(f"round_host_slowdowns_{side}", r.get("round_host_slowdowns")))
    kept = rounds_kept(list(medians), list(slowdowns))
    if len(kept) == len(medians) or len(kept) < vd.MIN_ROUNDS:
        return None
    return np.isin(np.arange(len(medians)), kept)


def kept_rounds(both: BothTimes, masks: tuple[np.ndarray | None, np.ndarray | None],
                probes: tuple[np.ndarray, np.ndarray] | None) -> tuple[BothTimes, tuple[np.ndarray, np.ndarray] | None]:
    """Both sides' round times, and their probes where they have one per round, without the rounds ``masks``
    (:func:`at_speed`) leave out; a side judged on one stream of samples, or without a mask, as it was."""
    sides, kept_probes = [], []
    for (times, rounds), mask, probe in zip(both, masks, probes or (None, None), strict=True):
        use = mask is not None and rounds and len(mask) == len(times)
        sides.append((times[mask], rounds) if use else (times, rounds))
        kept_probes.append(probe[mask] if use and probe is not None and len(probe) == len(mask) else probe)
    out_probes = None if probes is None else (kept_probes[0], kept_probes[1])
    return (sides[0], sides[1]), out_probes


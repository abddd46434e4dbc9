"""What two runs of one suite share and what they do not: the machine's speed as each round started, and the
conditions their rows recorded. ``compare`` judges a cell at one speed where the machine drifted and says
where the runs' conditions differ, beside its verdicts (:func:`workbench.judge.compare.compare_runs`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from workbench.judge.verdicts import parse_samples

if TYPE_CHECKING:
    import pandas as pd

#: Both runs' times of a cell as :func:`row_times` gives them: (times, whether round medians) for A, then B.
BothTimes = tuple[tuple[np.ndarray, bool], tuple[np.ndarray, bool]]


class SpeedProbes:
    """The machine's speed probes of two runs' rounds (:mod:`workbench.measure.speed_probe`), and the cells
    judged at one speed: each round median divided by its round's probe (times run A's median probe, to keep
    seconds), for cells measured on one machine in both runs with a probe for every round. A host that
    drifted between the runs (our VMs: 4-6% in minutes) then reads as the drift it is, not as every kernel."""

    def __init__(self, reference: float | None, drift: float | None) -> None:
        #: Run A's median probe (seconds); None when the runs have no probes to judge by.
        self.reference = reference
        #: Run B's median probe over run A's (1.05: the machine ran 5% slower in B); None without probes.
        self.drift = drift

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
        sides = [parse_samples(r.get(f"round_bandwidth_gbs_{s}", r.get("round_bandwidth_gbs"))) for s in "ab"]
        if not all(len(g) and (g > 0).all() for g in sides):
            return None
        return 1.0 / sides[0], 1.0 / sides[1]

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
        return cls(ref, float(np.median(pb)) / ref)

    def adjusted(self, both: BothTimes, probes: tuple[np.ndarray, np.ndarray] | None) -> BothTimes:
        """Both sides' times at run A's speed, where the cell ran on one machine and both sides have a probe per
        round median; else as measured."""
        (ta, ra), (tb, rb) = both
        if self.reference is None or probes is None or not (ra and rb):
            return both
        pa, pb = probes
        if len(pa) != len(ta) or len(pb) != len(tb):
            return both
        return (ta / pa * self.reference, ra), (tb / pb * self.reference, rb)


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
        out.append(f"other processes took {100 * sa:.0f}% of the CPU in the first run and {100 * sb:.0f}% in the "
                   "second: parallel kernels read slower where a core was taken")
    out += _device_changes(a, b)
    ta = set(a["threads"].dropna()) if "threads" in a else set()
    tb = set(b["threads"].dropna()) if "threads" in b else set()
    if ta and tb and ta.isdisjoint(tb):
        out.append(f"the thread pools differed: {sorted(ta)[0]!r} against {sorted(tb)[0]!r}")
    return out


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

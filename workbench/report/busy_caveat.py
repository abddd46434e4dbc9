"""A shared machine said with what its figure means and what to do about it.

``other_cpu_share`` is the share of the whole machine's CPU (every core together) that processes outside this
run's own process tree used while a cell ran (docs/statistics.md): 04 printed "76% of the CPU" where one of 2
cores was kept busy (50%) and did not say what the rest was or whether our own processes were in it. And the
advice names every multi-threaded side, as the rows record their threads: 04 warned that "a multi-threaded
library loses most when its threads wait for a core" while numba's kernels beside it ran 2 threads too and
carried no caveat; 06 printed the share with no advice at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.report.claims_cause import busy_share

#: A thread pool in a row's ``threads`` column: "numba 2", "blas:openblas 2", "openmp:libgomp 2".
_POOL = re.compile(r"([A-Za-z0-9_.:-]+) (\d+)")
#: The pool a runtime's kernels run on, where it is not the runtime's own name.
_RUNTIME_POOL = {"numpy": "blas", "scipy": "blas"}


def _cores(cores: int | None) -> int:
    if cores is not None:
        return cores
    import psutil

    return psutil.cpu_count() or 1


def row_threads(row: Mapping[str, Any]) -> tuple[str, int] | None:
    """(pool, threads) a row's kernel ran on, from its ``threads`` column: the pool named as its runtime (numpy's
    is its BLAS, for a compute-bound call; its element-wise ufuncs run on one thread whatever BLAS has loaded:
    05's numpy-unfused bias_gelu is not multi-threaded); None where the row does not record it."""
    text = row.get("threads")
    runtime = str(row.get("runtime") or row.get("backend") or "")
    if not isinstance(text, str) or not runtime:
        return None
    if runtime == "numpy" and row.get("bound") != "compute-bound":
        return "numpy", 1
    want = _RUNTIME_POOL.get(runtime, runtime)
    for name, n in _POOL.findall(text.split(";")[0]):
        if name == want or name.split(":")[0] == want:
            return name, int(n)
    return None


def threaded_sides(rows: pd.DataFrame) -> list[str]:
    """The multi-threaded variants among ``rows``, with their threads: "numba-tiled @ numba (numba, 2 threads)"."""
    out = []
    for r in rows.drop_duplicates(["variant", "backend"]).to_dict("records"):
        got = row_threads(r)
        if got is not None and got[1] > 1:
            out.append(f"{r['variant']} @ {r['backend']} ({got[0]}, {got[1]} threads)")
    return out


def share_words(share: float, cores: int | None = None) -> str:
    """"76% of the CPU (all 2 cores together, this run's own processes not counted: about 1.5 cores)"."""
    n = _cores(cores)
    return (f"{share:.0%} of the CPU (all {n} cores together, this run's own processes not counted: about "
            f"{share * n:.1f} core{'' if round(share * n, 1) == 1 else 's'})")


def shared_machine_advice(rows: pd.DataFrame, cores: int | None = None) -> str:
    """"" on a quiet machine; else short sentences (one was 90 words, issue 39): the other processes' share in
    words (:func:`share_words`); that every multi-threaded side among ``rows`` (:func:`threaded_sides`) loses most
    when its threads wait for a core; what a paired verdict's interval already counts of it and what it cannot;
    and the rerun that would tell the kernels' own times from the machine's."""
    share = busy_share(rows)
    if share is None or share <= BUSY_CPU_SHARE:
        return ""
    sides = threaded_sides(rows)
    who = (f"Kernels that ran a pool of threads ({'; '.join(sides)}, as their rows record) lose most when their "
           "threads wait for a core, on either side of a comparison" if sides
           else "A kernel's time and the order of two can move with it")
    # how the caveat fits a settled verdict beside it: the paired interval already counts the noise the load added
    # between rounds; what it cannot remove is a slowdown held through every round, which falls unequally (06 told
    # readers not to read "their order" at all, beneath verdicts settled past that noise)
    threaded = " and any verdict with a threaded side" if sides else ""
    # which verdicts stand as printed (03, 04, 05's readers: the advice undercut every verdict above it alike)
    single = _single_threaded(rows)
    stand = (f" A verdict between two single-threaded sides (of {'; '.join(single)}) stands as printed: the load "
             "slows both alike within each round, and its paired interval counts the rest." if len(single) > 1
             and sides else "")
    n = len(rows)
    return (f"This run shared the machine: other processes used up to {share_words(share, cores)} while these "
            f"cells ran (the largest over the {n} row{'' if n == 1 else 's'} these verdicts rest on). {who}. "
            "A paired verdict's interval already counts the noise this added between rounds; what it cannot remove "
            "is a slowdown that lasted through every round, which falls on the threaded sides more than on the "
            f"others.{stand} Rerun on an idle machine to read the times{threaded} as the kernels' own.")


def _single_threaded(rows: pd.DataFrame) -> list[str]:
    """The variants among ``rows`` whose rows record one thread: "numpy-unfused @ numpy"."""
    out = []
    for r in rows.drop_duplicates(["variant", "backend"]).to_dict("records"):
        got = row_threads(r)
        if got is not None and got[1] == 1:
            out.append(f"{r['variant']} @ {r['backend']}")
    return out

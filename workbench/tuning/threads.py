"""Thread counts measured on this machine, as YiRage's ``optimize`` does: the same GEMM timed at each count.

Counts are set in this process (``numba.set_num_threads``, ``torch.set_num_threads``, threadpoolctl's BLAS
limit) and the counts are visited in interleaved rounds, so a slow moment of the machine does not land on
one count only; the pick is the fastest median of the rounds' medians, the fewer threads on a tie within 3%.
"""

from __future__ import annotations

import contextlib
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from workbench.core.status import Status
from workbench.measure.cell import Cell, run_cell
from workbench.measure.timer import TimingConfig

#: Backend runtime -> (configuration key, the gemm variant timed).
THREADED_RUNTIMES = {"numba": ("numba", "numba-tiled"), "torch": ("torch", "torch"), "numpy": ("blas", "numpy")}


@dataclass
class ThreadChoice:
    key: str
    variant: str
    medians_s: dict[int, float]
    best: int


def candidate_counts(cores: int | None = None) -> list[int]:
    """1, 2, 4, ... up to the cores, and the cores themselves."""
    cores = cores or os.cpu_count() or 1
    out, n = [], 1
    while n < cores:
        out.append(n)
        n *= 2
    return [*out, cores]


@contextlib.contextmanager
def thread_count(runtime: str, n: int) -> Iterator[None]:
    """The runtime's pool limited to ``n`` threads inside the block."""
    if runtime == "numba":
        import numba

        old = numba.get_num_threads()
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        try:
            yield
        finally:
            numba.set_num_threads(old)
    elif runtime == "torch":
        import torch

        old = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(old)
    else:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=n, user_api="blas"):
            yield


def measure_threads(backend: str, runtime: str, dtype: str = "float32", rounds: int = 3,
                    params: dict[str, int] | None = None) -> ThreadChoice:
    """Time the runtime's gemm at each candidate count; rows that fail verification are an error."""
    key, variant = THREADED_RUNTIMES[runtime]
    params = params or {"m": 384, "n": 384, "k": 384}
    timing = TimingConfig(budget_s=0.2, min_samples=5, warmup_s=0.05)
    per_count: dict[int, list[float]] = {n: [] for n in candidate_counts()}
    for _ in range(rounds):
        for n in per_count:
            with thread_count(runtime, n):
                row = run_cell(Cell.make("gemm", variant, backend, dtype, params), timing)
            if row["status"] != Status.OK:
                raise RuntimeError(f"gemm/{variant} on {backend} with {n} threads: {row['status']}: {row['message']}")
            per_count[n].append(row["median_s"])
    medians = {n: statistics.median(v) for n, v in per_count.items()}
    fastest = min(medians.values())
    best = min(n for n, m in medians.items() if m <= fastest * 1.03)
    return ThreadChoice(key, variant, medians, best)

"""One executor protocol: requests in, ``(request, result)`` pairs out, wherever the cells run.

The sweep, ``workbench verify`` and the ceiling probe hand :class:`~workbench.measure.request.CellRequest`
values to an executor and get :class:`~workbench.measure.result.CellResult` values back, whether the cells
run on a thread of this process (:class:`~workbench.measure.isolation.InProcessExecutor`), in a worker
process per backend (:class:`~workbench.measure.process_worker.ProcessExecutor`) or on Dask workers
(:class:`workbench.cluster.ClusterExecutor`). None of them raises for a problem of the cell itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from workbench.measure.request import BUILD_TIMEOUT_S, Cell, CellRequest, CheckOnly, RoundRole
from workbench.measure.result import CellResult
from workbench.measure.rounds import finish_single_round
from workbench.measure.timer import Cancelled, TimingConfig
from workbench.roofs.throughput import Peaks

#: Polled between cells and, where the executor can act on it, while one runs; True stops the run
#: (:class:`~workbench.measure.timer.Cancelled`).
ShouldStop = Callable[[], bool]
#: Told each request just before it starts running here (the sweep's in-flight marker and progress label).
OnStart = Callable[[CellRequest], None]


class CellExecutor(Protocol):
    """Runs cells. ``isolation`` names where; ``runs_here`` is False when they run on other machines (the
    ceilings behind their ``% of peak`` are then measured there, not here)."""

    isolation: str
    runs_here: bool

    def warm(self, backends: Sequence[str]) -> None:
        """Start paying the one-time costs of ``backends`` side by side (worker starts), without waiting."""

    def prepare(self, backend: str) -> str | None:
        """Pay a backend's one-time costs before its first cell; returns a problem or None."""

    def run(self, requests: Iterable[CellRequest], *, should_stop: ShouldStop | None = None,
            on_start: OnStart | None = None) -> Iterator[tuple[CellRequest, CellResult]]:
        """Each request with its result, as they finish (in order, for executors that run one at a time).
        Closing the iterator early abandons the requests not yet run."""

    def execute(self, cell: Cell, config: TimingConfig | CheckOnly, **how: Any) -> dict[str, Any]:
        """One cell's row, for callers that keep rows themselves (the ceiling probe, ``verify``)."""

    def close(self) -> None:
        ...


def request_of(cell: Cell, config: TimingConfig | CheckOnly, *, timeout_s: float = math.inf,
               build_timeout_s: float = BUILD_TIMEOUT_S, seed: int = 0, peaks: Peaks | None = None,
               later_round: bool = False, check_after: bool = True) -> CellRequest:
    """The request the keyword arguments of :meth:`CellExecutor.execute` describe."""
    return CellRequest(cell, config, RoundRole.of_flags(later_round, check_after), seed, timeout_s, build_timeout_s,
                       peaks)


class LocalExecutor:
    """What the executors that run cells on this machine share: one cell at a time, in the order given."""

    isolation = "local"
    runs_here = True

    def run_one(self, request: CellRequest, should_stop: ShouldStop | None = None) -> CellResult:
        raise NotImplementedError

    def warm(self, backends: Sequence[str]) -> None:
        """Nothing to start ahead (the worker-process executor starts its workers)."""

    def release(self, backends: Iterable[str]) -> None:
        """``backends`` have no cells left for now: nothing to free here (the worker-process executor stops
        their workers; a later cell of one starts it again)."""

    def run(self, requests: Iterable[CellRequest], *, should_stop: ShouldStop | None = None,
            on_start: OnStart | None = None) -> Iterator[tuple[CellRequest, CellResult]]:
        for request in requests:
            if should_stop is not None and should_stop():
                raise Cancelled("stopped between cells")
            if on_start is not None:
                on_start(request)
            yield request, self.run_one(request, should_stop)

    def execute(self, cell: Cell, config: TimingConfig | CheckOnly, *, should_stop: ShouldStop | None = None,
                **how: Any) -> dict[str, Any]:
        """One cell's row (``how``: :func:`request_of`'s keywords), as a single round would store it."""
        return finish_single_round(self.run_one(request_of(cell, config, **how), should_stop).to_row())

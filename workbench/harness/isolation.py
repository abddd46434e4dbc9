"""Where cells run: in worker processes (the default), or in this process for debugging.

Users bring their own kernels, and some of them crash, hang or grow memory without end. With
``isolation="process"`` every backend's cells run in a warm worker process of their own
(:mod:`workbench.harness.process_worker`): a crash becomes a ``crashed`` row and a new worker, a hung cell's
process is killed, and a memory cap ends a runaway cell as ``oom``, while the sweep, the dashboard and
the notebook's kernel live on. Timing happens inside the worker, so the figures are the same as in-process.

``isolation="in-process"`` runs cells on a thread of this process (:class:`~workbench.harness.worker.CellWorker`):
a debugger and print statements reach the kernel, and nothing is pickled; but a crashing kernel takes the
process with it, and a hung call can only be abandoned.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from .cell import BUILD_TIMEOUT_S, Cell, CheckOnly, InputCache, execute_cell, failed_row, prepare_backend
from .throughput import Peaks
from .timer import TimingConfig
from .worker import CellWorker

#: Ways to run cells: a worker process per backend, or threads of this process.
ISOLATIONS = ("process", "in-process")
#: Overrides the default isolation (``process``) where a caller does not choose one.
ENV_ISOLATION = "WORKBENCH_ISOLATION"


def default_isolation() -> str:
    return os.environ.get(ENV_ISOLATION, "").strip() or "process"


def check_isolation(value: str | None) -> str:
    """``value`` (None: :func:`default_isolation`) if it is one of :data:`ISOLATIONS`; else ValueError."""
    chosen = default_isolation() if value is None else value
    if chosen not in ISOLATIONS:
        source = f" (from ${ENV_ISOLATION})" if value is None else ""
        raise ValueError(f"unknown isolation {chosen!r}{source}; valid: {', '.join(ISOLATIONS)}")
    return chosen


class CellExecutor(Protocol):
    """Runs cells and returns their rows; never raises for a problem of the cell itself."""

    isolation: str

    def prepare(self, backend: str) -> str | None:
        """Pay a backend's one-time costs before its first cell; returns a problem or None."""

    def execute(self, cell: Cell, config: TimingConfig | CheckOnly, *, timeout_s: float,
                build_timeout_s: float = BUILD_TIMEOUT_S, seed: int = 0, peaks: Peaks | None = None,
                later_round: bool = False, check_after: bool = True,
                should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """One cell's row. ``should_stop`` (polled while the cell runs, where the executor can act on it)
        raises :class:`~workbench.harness.timer.Cancelled` when it returns True."""

    def close(self) -> None:
        ...


class InProcessExecutor:
    """Cells on a thread of this process, sharing one input cache (``isolation="in-process"``)."""

    isolation = "in-process"

    def __init__(self, name: str = "workbench-cell", worker: CellWorker | None = None) -> None:
        self.worker = worker or CellWorker(name)
        self.inputs = InputCache()

    def prepare(self, backend: str) -> str | None:
        return prepare_backend(backend)

    def execute(self, cell: Cell, config: TimingConfig | CheckOnly, *, timeout_s: float,
                build_timeout_s: float = BUILD_TIMEOUT_S, seed: int = 0, peaks: Peaks | None = None,
                later_round: bool = False, check_after: bool = True,
                should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        problem = in_process_problem(cell.backend)
        if problem:
            return failed_row(cell, "unsupported", problem, seed=seed, started=time.perf_counter())
        with backend_environment(cell.backend):
            return execute_cell(cell, config, self.worker, timeout_s=timeout_s, build_timeout_s=build_timeout_s,
                                seed=seed, inputs=self.inputs, peaks=peaks, later_round=later_round,
                                check_after=check_after)

    def close(self) -> None:
        self.worker.close()


def in_process_problem(backend: str) -> str | None:
    """Why ``backend``'s cells cannot run in this process (``Backend.in_process_problem``), or None."""
    from ..backends.registry import get

    try:
        return get(backend).in_process_problem()
    except Exception:  # noqa: BLE001 - an unknown backend's cell fails in execute_cell with the reason
        return None


@contextlib.contextmanager
def backend_environment(backend: str) -> Iterator[None]:
    """The backend's ``worker_env`` (e.g. ``TRITON_INTERPRET=1`` for Triton's interpreter) set in this process
    while one of its cells runs here, as its worker process would start with it; restored afterwards."""
    from ..backends.registry import get

    try:
        env = dict(get(backend).worker_env)
    except Exception:  # noqa: BLE001 - an unknown backend's cell fails in execute_cell with the reason
        env = {}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_executor(isolation: str | None = None, *, memory_cap: str | int | None = None, boundscheck: bool = False,
                  name: str = "workbench") -> CellExecutor:
    """The executor for ``isolation`` (None: ``$WORKBENCH_ISOLATION`` or ``process``). ``memory_cap``: see
    :func:`workbench.harness.memory_cap.parse_memory_cap` (process isolation only). ``boundscheck``: numba
    variants compile with bounds checks (in-process, the caller sets
    :func:`~workbench.catalog.authoring.boundscheck`)."""
    chosen = check_isolation(isolation)
    if chosen == "in-process":
        return InProcessExecutor(f"{name}-cell")
    from .memory_cap import parse_memory_cap
    from .process_worker import ProcessExecutor

    return ProcessExecutor(memory_cap=parse_memory_cap(memory_cap), boundscheck=boundscheck,
                           fallback=lambda: InProcessExecutor(f"{name}-cell-fallback"))


def as_executor(worker: CellWorker | CellExecutor | None, name: str = "workbench") -> CellExecutor:
    """An executor for callers that still pass a :class:`CellWorker` (in-process) or nothing (the default)."""
    if worker is None:
        return make_executor(name=name)
    if isinstance(worker, CellWorker):
        return InProcessExecutor(worker=worker)
    return worker

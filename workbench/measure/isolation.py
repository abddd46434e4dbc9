"""Where cells run: in worker processes (the default), or in this process for debugging.

Users bring their own kernels, and some of them crash, hang or grow memory without end. With
``isolation="process"`` every backend's cells run in a warm worker process of their own
(:mod:`workbench.measure.process_worker`): a crash becomes a ``crashed`` row and a new worker, a hung cell's
process is killed, and a memory cap ends a runaway cell as ``oom``, while the sweep, the dashboard and
the notebook's kernel live on. Timing happens inside the worker, so the figures are the same as in-process.

``isolation="in-process"`` runs cells on a thread of this process (:class:`~workbench.measure.worker.CellWorker`):
a debugger and print statements reach the kernel, and nothing is pickled; but a crashing kernel takes the
process with it, and a hung call can only be abandoned.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from workbench.backends.registry import get as get_backend
from workbench.core.process_state import process_state_kept
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.measure.audit import judge_reported
from workbench.measure.backend_facts import after_oom, prepare_backend
from workbench.measure.cell import measure
from workbench.measure.descendants import ENV_TOKEN, cell_token, end_descendants, new_token
from workbench.measure.executor import CellExecutor, LocalExecutor, ShouldStop
from workbench.measure.exit_guard import process_exit_refused
from workbench.measure.failures import failed_result, timeout_message
from workbench.measure.input_cache import InputCache
from workbench.measure.limits import Limits
from workbench.measure.memory_cap import parse_memory_cap
from workbench.measure.process_worker import ProcessExecutor
from workbench.measure.request import BUILD_TIMEOUT_S, Cell, CellRequest, CheckOnly, RoundRole
from workbench.measure.result import CellResult
from workbench.measure.rounds import finish_single_round
from workbench.measure.timer import TimingConfig
from workbench.measure.worker import CellWorker, WorkerTimeout
from workbench.roofs.throughput import Peaks

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


class InProcessExecutor(LocalExecutor):
    """Cells on a thread of this process, sharing one input cache (``isolation="in-process"``)."""

    isolation = "in-process"

    def __init__(self, name: str = "workbench-cell", worker: CellWorker | None = None) -> None:
        self.worker = worker or CellWorker(name)
        self.inputs = InputCache()
        #: Carried by every process a kernel starts while its cell runs here, so that those still running end
        #: with this executor, as a worker's do with the worker (:mod:`workbench.measure.descendants`).
        self.token = new_token()

    def prepare(self, backend: str) -> str | None:
        return prepare_backend(backend)

    def run_one(self, request: CellRequest, should_stop: ShouldStop | None = None) -> CellResult:
        """The cell on this executor's thread (``should_stop`` is polled between cells only: a call here
        cannot be interrupted, only abandoned at its limit)."""
        problem = in_process_problem(request.cell.backend)
        if problem:
            return failed_result(request.cell, Status.UNSUPPORTED, problem, seed=request.seed,
                                 started=time.perf_counter())
        with backend_environment(request.cell.backend, {ENV_TOKEN: self.token}), process_exit_refused():
            return run_on_thread(request, self.worker, self.inputs, token=self.token)

    def close(self) -> None:
        self.worker.close()
        end_descendants(self.token)  # a kernel's `sleep 777 &` outlived `bench --in-process`, which exited 0


def in_process_problem(backend: str) -> str | None:
    """Why ``backend``'s cells cannot run in this process (``Backend.in_process_problem``), or None."""
    try:
        return get_backend(backend).in_process_problem()
    except Exception:  # noqa: BLE001 - an unknown backend's cell fails in execute_cell with the reason
        return None


@contextlib.contextmanager
def backend_environment(backend: str, more: Mapping[str, str] | None = None) -> Iterator[None]:
    """The backend's ``worker_env`` (e.g. ``TRITON_INTERPRET=1`` for Triton's interpreter) and ``more`` set in
    this process while one of its cells runs here, as its worker process would start with them; restored
    afterwards."""
    try:
        env = dict(get_backend(backend).worker_env)
    except Exception:  # noqa: BLE001 - an unknown backend's cell fails in execute_cell with the reason
        env = {}
    env.update(more or {})
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
                  name: str = "workbench") -> LocalExecutor:
    """The executor for ``isolation`` (None: ``$WORKBENCH_ISOLATION`` or ``process``). ``memory_cap``: see
    :func:`workbench.measure.memory_cap.parse_memory_cap` (process isolation only). ``boundscheck``: numba
    variants compile with bounds checks (in-process, the caller sets
    :func:`~workbench.authoring.numba_support.boundscheck`)."""
    chosen = check_isolation(isolation)
    if chosen == "in-process":
        return InProcessExecutor(f"{name}-cell")
    cap = parse_memory_cap(memory_cap)
    early = _take_early(cap, boundscheck)
    if early is not None:
        return early
    return ProcessExecutor(memory_cap=cap, boundscheck=boundscheck,
                           fallback=lambda: InProcessExecutor(f"{name}-cell-fallback"))


#: An executor whose workers :func:`start_early` launched, and the settings it was made with.
_early: tuple[tuple[int | None, bool], ProcessExecutor] | None = None


def start_early(backends: Sequence[str], isolation: str | None = None, *, memory_cap: str | int | None = None,
                name: str = "workbench") -> None:
    """Launch the worker processes of ``backends`` now, before the caller has built its sweep: the next
    :func:`make_executor` with the same settings takes them. A worker's start (imports, the catalog) then
    overlaps the caller's own set-up; one numpy cell through the CLI waited 0.24 s for its worker otherwise.
    Nothing happens in-process; workers no sweep takes are stopped at exit."""
    global _early
    if check_isolation(isolation) != "process" or not backends or _early is not None:
        return
    cap = parse_memory_cap(memory_cap)
    ex = ProcessExecutor(memory_cap=cap, boundscheck=False, fallback=lambda: InProcessExecutor(f"{name}-cell-fallback"))
    ex.warm(list(backends))
    _early = ((cap, False), ex)
    atexit.register(_close_early)


def _take_early(cap: int | None, boundscheck: bool) -> ProcessExecutor | None:
    global _early
    if _early is None or _early[0] != (cap, boundscheck):
        return None
    ex, _early = _early[1], None
    return ex


def _close_early() -> None:
    global _early
    if _early is not None:
        ex, _early = _early[1], None
        ex.close()


def as_executor(worker: CellWorker | CellExecutor | None, name: str = "workbench") -> CellExecutor:
    """An executor for callers that still pass a :class:`CellWorker` (in-process) or nothing (the default)."""
    if worker is None:
        return make_executor(name=name)
    if isinstance(worker, CellWorker):
        return InProcessExecutor(worker=worker)
    return worker


# -- a cell on a thread of this process: the in-process isolation, and its row for tests and scripts ----------
def _with_token(token: str | None, fn: Callable[..., CellResult], **kw: Any) -> CellResult:
    """``fn(**kw)`` on the cell's thread, what that thread starts carrying ``token`` (:func:`cell_token`)."""
    if token is None:
        return fn(**kw)
    with cell_token(token):
        return fn(**kw)


def run_on_thread(request: CellRequest, worker: CellWorker, inputs: InputCache | None = None,
                  token: str | None = None) -> CellResult:
    """:func:`measure` on ``worker`` with a hard wall-time limit; a call that never returns becomes ``timeout``.
    With an in-process executor's ``token``: what the cell's thread starts carries it (:func:`cell_token`), and
    the process's state is put back as soon as the cell returns (:func:`process_state_kept`), before its result is
    judged here (a kernel's ``sys.setrecursionlimit(60)`` failed that judging on a caller deeper than 60 frames).

    The cell's own deadline (checked between calls) fires first; the hard limit
    adds a little grace so that a cell which stops by itself keeps its partial
    samples. The build (inputs, reference, compilation) has its own limit,
    ``build_timeout_s``, and the run limit starts after it. After an out-of-memory
    cell the backend frees its caches here, before the next cell starts.
    """
    t0 = time.perf_counter()
    timeout_s = request.timeout_s
    limits = Limits.of(request)
    grace = min(2.0, 0.1 * timeout_s + 0.2)
    first_grace = min(grace, 0.1 * request.first_call_limit_s + 0.2)
    kept = (process_state_kept(f"{request.cell.kernel}/{request.cell.variant} (in-process)") if token is not None
            else contextlib.nullcontext())
    try:
        with kept:
            res = worker.run(functools.partial(_with_token, token, functools.partial(measure, request, inputs=inputs,
                                                                                      limits=limits)),  # cancel=
                             timeout_s + grace, deadline=lambda: limits.hard_deadline(
                                 first_grace if limits.in_first_call else grace))
    except WorkerTimeout:
        phase = ("first call" if limits.in_first_call else "run") if limits.run_deadline < math.inf else "build"
        res = failed_result(request.cell, Status.TIMEOUT, timeout_message(request, phase)
                            + "; its worker thread was abandoned", seed=request.seed, started=t0)
    res = judge_reported(res, time.perf_counter() - t0)
    if res.status is Status.OOM:
        after_oom(res, request.cell.backend)
    busy = worker.still_running_abandoned()
    if busy:
        res.note(f"{busy} abandoned timed-out cell(s) still running: this timing may be disturbed")
    return res


def execute_cell(cell: Cell, config: TimingConfig | CheckOnly, worker: CellWorker, *, timeout_s: float,
                 seed: int = 0, inputs: InputCache | None = None, peaks: Peaks | None = None,
                 later_round: bool = False, check_after: bool = True,
                 build_timeout_s: float = BUILD_TIMEOUT_S) -> RowDict:
    """:func:`run_on_thread` of one cell, as its row."""
    request = CellRequest(cell, config, RoundRole.of_flags(later_round, check_after), seed, timeout_s,
                          build_timeout_s, peaks)
    return finish_single_round(run_on_thread(request, worker, inputs).to_row())

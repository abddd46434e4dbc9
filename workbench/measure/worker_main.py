"""The worker process: runs one backend's cells for its parent, one at a time, until told to stop.

Started by :class:`workbench.measure.process_worker.WorkerProcess` as
``python -m workbench.measure.worker_main <fd>``, ``fd`` being its end of a socket pair. It stays warm: JIT
caches, device contexts, inputs and references survive from cell to cell. A kernel that kills it (a
segfault, an abort, a write over the allocator's books) takes down only this process; the parent records
the cell as ``crashed`` and starts another.

Messages: the dataclasses of :mod:`workbench.measure.messages` (:class:`Start`, :class:`Prepare`,
:class:`RunCell`, :class:`Stop` from the parent; :class:`Ready`, :class:`Prepared`, :class:`RunStarted` when
a cell's build is done and its run limit starts, :class:`CellDone` back).
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection

from workbench.authoring.numba_support import boundscheck
from workbench.backends import registry
from workbench.catalog.shipping import install
from workbench.core.conditions import count_as_own, take_reading
from workbench.core.env_values import worker_profile_dir
from workbench.core.status import Status
from workbench.core.threads_left import exit_now
from workbench.measure.backend_facts import after_oom, prepare_backend
from workbench.measure.cell import measure
from workbench.measure.descendants import become_subreaper
from workbench.measure.failures import failed_result
from workbench.measure.input_cache import InputCache
from workbench.measure.limits import Limits
from workbench.measure.memory_cap import limit_address_space
from workbench.measure.messages import (
    CellDone,
    FirstCallDone,
    Prepare,
    Prepared,
    Ready,
    RunCell,
    RunStarted,
    Start,
    Stop,
)
from workbench.measure.result import CellResult
from workbench.measure.shared_arrays import SharedArrays


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a killed notebook must not leave a worker
    spinning in a hung kernel); elsewhere the closed socket ends it at the next message."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def heap_trimmer() -> Callable[[], object]:
    """glibc's ``malloc_trim(0)``, or a no-op where there is none (musl, macOS).

    Why: arrays below glibc's mmap threshold come from the heap, and glibc raises that threshold (up to 32 MiB)
    once a large array is freed, so a cell's inputs, outputs, temporaries and a runtime's buffers (PoCL's) are
    mostly heap memory, which stays with the process when freed. Measured mid quick-suite (gdb calling
    malloc_trim in live workers): numpy's worker 366 -> 128 MiB PSS, PoCL's 809 -> 279 MiB. Trimmed between
    cells, the timing loops themselves allocate as before."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


class WorkerState:
    """What a worker process keeps from cell to cell: its inputs and the catalog entries installed."""

    def __init__(self, start: Start) -> None:
        self.backend = start.backend
        self.memory_cap = start.memory_cap
        shared = SharedArrays(start.shared_dir) if start.shared_dir else None
        self.inputs = InputCache(start.input_cache_bytes or (1 << 29), shared=shared)
        self.installed: dict[tuple[str, str | None], str] = {}
        self._cpu_backend: bool | None = None

    def cpu_backend(self) -> bool:
        """Whether an address-space limit is safe here (not for GPU runtimes, which reserve huge ranges)."""
        if self._cpu_backend is None:
            try:
                self._cpu_backend = registry.get(self.backend).device_class == "cpu"
            except Exception:  # noqa: BLE001 - unknown: leave the limit to the parent's watchdog
                self._cpu_backend = False
        return self._cpu_backend


def run_job(conn: Connection, job: RunCell, state: WorkerState) -> CellResult:
    """One cell, as :func:`workbench.measure.cell.measure` runs it in-process, plus what isolation adds:
    the cell's catalog entries installed, the run start reported, the address space capped."""
    request = job.request
    t0 = time.perf_counter()
    try:
        install(job.shipment, state.installed)
    except Exception as exc:  # noqa: BLE001 - the cell's result says why its kernel could not be rebuilt
        return failed_result(request.cell, Status.ERROR,
                             f"could not rebuild the kernel in the worker process: {type(exc).__name__}: {exc}",
                             seed=request.seed, started=t0, traceback=traceback.format_exc())
    limits = Limits.of(request, on_run=lambda: conn.send(RunStarted(job.job_id)),
                       on_first_call=lambda: conn.send(FirstCallDone(job.job_id)))
    capped = state.memory_cap is not None and state.cpu_backend() and limit_address_space(state.memory_cap)
    try:
        res = measure(request, inputs=state.inputs, limits=limits)
    except KeyboardInterrupt as exc:  # SIGINT is ignored here, so the kernel raised it: its cell's error
        res = failed_result(request.cell, Status.ERROR, "the variant raised KeyboardInterrupt (not an interrupt: "
                            "the worker ignores Ctrl-C, which its parent handles)", seed=request.seed, started=t0,
                            traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    finally:
        if capped:
            limit_address_space(None)
    if res.status is Status.OOM:
        if capped:
            res.note(f"the cell may add at most {state.memory_cap / 2**30:.3g} GiB to its worker's address space "
                     "(--memory-cap)")
        state.inputs = type(state.inputs)(state.inputs.max_bytes, shared=state.inputs.shared)  # start lean
        gc.collect()
        after_oom(res, request.cell.backend)
    return res


def serve(conn: Connection) -> None:
    start: Start = conn.recv()
    for p in reversed(start.sys_path):  # the parent's import path: inline kernels may import its modules
        if p not in sys.path:
            sys.path.insert(0, p)
    count_as_own(start.parent_pid)  # the parent's bookkeeping between cells is not "other load"
    take_reading()
    state = WorkerState(start)
    trim_heap = heap_trimmer()
    with boundscheck(start.boundscheck):
        conn.send(Ready(os.getpid()))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if isinstance(msg, Stop):
                return
            if isinstance(msg, Prepare):
                conn.send(Prepared(msg.backend, prepare_backend(msg.backend)))
            elif isinstance(msg, RunCell):
                conn.send(CellDone(msg.job_id, run_job(conn, msg, state)))
                trim_heap()  # the cell's freed memory back to the system, while the parent stores its row
            sys.stdout.flush()
            sys.stderr.flush()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this worker
    for name in ("SIGTERM", "SIGHUP"):  # so are these, sent to the whole group (a closed terminal, kill -- -PGID)
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _die_with_parent()
    become_subreaper()  # a kernel's double-forked, token-less orphans stay our children, and end with us
    faulthandler.enable()  # a crash prints the Python frame it happened in; the parent quotes it
    conn = Connection(int(argv[1]))
    try:  # a folder: each worker writes its cProfile there (the command refused a value that is not one)
        profile_dir = worker_profile_dir()
    except ValueError as exc:
        print(f"workbench worker: {exc}; not profiling", file=sys.stderr)
        profile_dir = None
    profiler = None
    if profile_dir:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        serve(conn)
    finally:
        conn.close()
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(os.path.join(profile_dir, f"worker-{os.getpid()}.prof"))
    return 0


if __name__ == "__main__":  # without joining a thread a kernel left running: the parent would wait, then kill
    exit_now(main(sys.argv))

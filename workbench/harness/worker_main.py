"""The worker process: runs one backend's cells for its parent, one at a time, until told to stop.

Started by :class:`workbench.harness.process_worker.WorkerProcess` as
``python -m workbench.harness.worker_main <fd>``, ``fd`` being its end of a socket pair. It stays warm: JIT
caches, device contexts, inputs and references survive from cell to cell. A kernel that kills it (a
segfault, an abort, a write over the allocator's books) takes down only this process; the parent records
the cell as ``crashed`` and starts another.

Messages (pickled tuples) from the parent: ``("cell", job_id, job)``, ``("prepare", backend)``,
``("stop",)``. To the parent: ``("ready", pid)``, ``("run", job_id)`` when a cell's build is done and its
run limit starts, ``("row", job_id, row)``, ``("prepared", problem)``.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a killed notebook must not leave a worker
    spinning in a hung kernel); elsewhere the closed socket ends it at the next message."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class WorkerState:
    def __init__(self, init: dict[str, Any]) -> None:
        from .cell import InputCache, SharedArrays

        self.backend: str = init["backend"]
        self.memory_cap: int | None = init["memory_cap"]
        shared = SharedArrays(init["shared_dir"]) if init.get("shared_dir") else None
        self.inputs = InputCache(init.get("input_cache_bytes") or (1 << 29), shared=shared)
        self.installed: dict[tuple[str, str | None], str] = {}
        self._cpu_backend: bool | None = None

    def cpu_backend(self) -> bool:
        """Whether an address-space limit is safe here (not for GPU runtimes, which reserve huge ranges)."""
        if self._cpu_backend is None:
            try:
                from ..backends import registry

                self._cpu_backend = registry.get(self.backend).device_class == "cpu"
            except Exception:  # noqa: BLE001 - unknown: leave the limit to the parent's watchdog
                self._cpu_backend = False
        return self._cpu_backend


def run_job(conn: Connection, job_id: int, job: dict[str, Any], state: WorkerState) -> dict[str, Any]:
    """One cell, as :func:`workbench.harness.cell.run_cell` runs it in-process, plus what isolation adds:
    the cell's catalog entries installed, the run start reported, the address space capped."""
    from ..catalog.shipping import install
    from .cell import Limits, after_oom, failed_row, run_cell
    from .memory_cap import limit_address_space

    cell = job["cell"]
    t0 = time.perf_counter()
    try:
        install(job["shipment"], state.installed)
    except Exception as exc:  # noqa: BLE001 - the cell's row says why its kernel could not be rebuilt
        return failed_row(cell, "error",
                          f"could not rebuild the kernel in the worker process: {type(exc).__name__}: {exc}",
                          seed=job["seed"], started=t0, traceback=traceback.format_exc())
    limits = Limits.starting_now(job["build_timeout_s"], job["timeout_s"], on_run=lambda: conn.send(("run", job_id)))
    capped = state.memory_cap is not None and state.cpu_backend() and limit_address_space(state.memory_cap)
    try:
        row = run_cell(cell, job["config"], seed=job["seed"], timeout_s=job["timeout_s"], inputs=state.inputs,
                       peaks=job["peaks"], later_round=job["later_round"], check_after=job["check_after"],
                       limits=limits)
    finally:
        if capped:
            limit_address_space(None)
    if row["status"] == "oom" and capped:
        row["message"] += (f"; the cell may add at most {state.memory_cap / 2**30:.3g} GiB to its worker's address "
                           "space (--memory-cap)")
    if row["status"] == "oom":
        state.inputs = type(state.inputs)(state.inputs.max_bytes, shared=state.inputs.shared)  # start lean
        gc.collect()
        after_oom(row, cell.backend)
    return row


def serve(conn: Connection) -> None:
    init = conn.recv()
    for p in reversed(init["sys_path"]):  # the parent's import path: inline kernels may import its modules
        if p not in sys.path:
            sys.path.insert(0, p)
    from ..catalog.authoring import boundscheck
    from ..conditions import count_as_own, take_reading
    from .cell import prepare_backend

    count_as_own(init["parent_pid"])  # the parent's bookkeeping between cells is not "other load"
    take_reading()
    state = WorkerState(init)
    with boundscheck(bool(init.get("boundscheck"))):
        conn.send(("ready", os.getpid()))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg[0] == "stop":
                return
            if msg[0] == "prepare":
                conn.send(("prepared", prepare_backend(msg[1])))
            elif msg[0] == "cell":
                _, job_id, job = msg
                conn.send(("row", job_id, run_job(conn, job_id, job, state)))
            sys.stdout.flush()
            sys.stderr.flush()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this worker
    _die_with_parent()
    faulthandler.enable()  # a crash prints the Python frame it happened in; the parent quotes it
    conn = Connection(int(argv[1]))
    profile_dir = os.environ.get("WORKBENCH_WORKER_PROFILE")  # a folder: each worker writes its cProfile there
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""What a Dask worker does with a cell: run it as a local sweep would, and say where it ran.

Each Dask worker keeps, per (isolation, memory cap), one cell executor (a warm worker process per
backend, as in a local sweep), the ceilings of each backend it has run (measured against a store of its
own: the client's store stays on the client) and its environment record. A lock makes the Dask worker run
one cell at a time, however many threads it has: cells side by side on one device would time each other.

That store lives in a folder made for it (``tempfile.mkdtemp``: a new random name, mode 0700), never at a
name another user could guess and plant first in the shared temporary folder: a planted symlink or a planted
store with a fake ceiling must have no effect on the rows (issue 24).
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from workbench.backends import registry
from workbench.core.processes import pid_alive
from workbench.core.record import JsonObject
from workbench.core.status import Status
from workbench.measure.executor import LocalExecutor
from workbench.measure.failures import failed_result
from workbench.measure.isolation import make_executor
from workbench.measure.request import CellRequest
from workbench.measure.result import CellResult
from workbench.roofs.peaks import ensure_ceilings
from workbench.roofs.throughput import Peaks
from workbench.store.database import Store, current_environment

_lock = threading.Lock()
#: A client asked to close the cell processes while a cell ran: close them when it ends.
_close_requested = False


@dataclass
class _WorkerState:
    executor: LocalExecutor
    store: Store
    peaks: dict[str, Peaks] = field(default_factory=dict)
    #: The environment record as last sent to the client, and the backends it describes.
    env_id: str = ""
    env: JsonObject = field(default_factory=dict)
    backends_seen: set[str] = field(default_factory=set)


#: The start of the name of a Dask worker's private folder (its store of ceilings): the worker process's pid,
#: ``-`` and random characters follow.
STORE_PREFIX = "workbench-cluster-worker-"
#: The store's name inside that folder.
STORE_NAME = "ceilings.sqlite"
_states: dict[tuple[str | None, str | int | None], _WorkerState] = {}


def _state(isolation: str | None, memory_cap: str | int | None) -> _WorkerState:
    key = (isolation, memory_cap)
    if key not in _states:
        _remove_orphaned_stores()
        folder = tempfile.mkdtemp(prefix=f"{STORE_PREFIX}{os.getpid()}-")  # 0700, a name nobody could plant
        _states[key] = _WorkerState(make_executor(isolation, memory_cap=memory_cap, name="workbench-dask"),
                                    Store(os.path.join(folder, STORE_NAME)))
    return _states[key]


def run_request(request: CellRequest, isolation: str | None, memory_cap: str | int | None,
                worker_address: str | None = None) -> CellResult:
    """Run ``request`` here, with this machine's ceilings; the result says where it ran (``placement``: env_id,
    machine, the Dask worker's address) and carries this machine's environment record (every time: each
    client's store needs it once)."""
    cell = request.cell
    address = worker_address or _worker_address()
    with _lock:
        st = _state(isolation, memory_cap)
        new_backend = cell.backend not in st.backends_seen
        unknown = _probe(cell.backend, address) if new_backend and not cell.unsupported else None
        if new_backend or not st.env_id:  # after the probe: the record lists the probed backends
            st.env_id, st.env = current_environment()
            st.store.add_environment(st.env_id, st.env)
            st.backends_seen.add(cell.backend)
        if unknown:
            res = failed_result(cell, Status.ERROR, unknown, seed=request.seed, started=time.perf_counter())
        else:
            if cell.backend not in st.peaks and not cell.unsupported:
                st.executor.prepare(cell.backend)
                st.peaks[cell.backend] = ensure_ceilings(st.store, st.env_id, cell.backend, st.executor)
            res = st.executor.run_one(request.with_ceilings(st.peaks.get(cell.backend)))
        if _close_requested:
            _close_now()
    res.placement.update(env_id=st.env_id, machine=socket.gethostname(), worker=address)
    res.environment = st.env
    return res


def close_states() -> None:
    """Stop every executor's worker processes (run on each Dask worker when the client is done). Runs on the
    Dask worker's event loop, so it never waits for a cell: a busy worker closes them after its cell."""
    global _close_requested
    if not _lock.acquire(blocking=False):
        _close_requested = True
        return
    try:
        _close_now()
    finally:
        _lock.release()


def _close_now() -> None:
    global _close_requested
    _close_requested = False
    for st in _states.values():
        st.executor.close()
        st.store.close()
        shutil.rmtree(Path(st.store.path).parent, ignore_errors=True)  # its folder only held its ceilings
    _states.clear()


def _remove_orphaned_stores() -> None:
    """Folders left by Dask worker processes that were killed (a lost worker cannot clean up): only real
    folders of this user (never a symlink, nor another user's) whose process is gone."""
    for path in Path(tempfile.gettempdir()).glob(f"{STORE_PREFIX}*-*"):
        pid = path.name[len(STORE_PREFIX):].split("-", 1)[0]
        try:
            info = path.lstat()
        except OSError:
            continue
        if (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and pid.isdigit()
                and int(pid) != os.getpid() and not pid_alive(int(pid))):
            shutil.rmtree(path, ignore_errors=True)


def _probe(backend: str, address: str) -> str | None:
    """Probe ``backend`` here; None, or why this worker has no such backend (its cell's result says it)."""
    try:
        registry.get(backend).probe()
        return None
    except ValueError as exc:
        hint = ""
        if ":" in backend:  # torch-cuda:1 on a worker that sees one device (CUDA_VISIBLE_DEVICES=1): its device 0
            hint = (f" A worker started for one device (CUDA_VISIBLE_DEVICES) sees it as device 0: on such a fleet "
                    f"name {backend.rsplit(':', 1)[0]!r} and the cells spread over every GPU worker.")
        return f"Dask worker {address} on {socket.gethostname()} has no backend {backend!r}: {exc}.{hint}"


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"pid {os.getpid()} on {socket.gethostname()}"

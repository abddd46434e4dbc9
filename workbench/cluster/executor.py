"""The client's side of a sweep on Dask: connect, submit a round's cells with resources, yield rows as they come.

:class:`ClusterExecutor` is what :func:`workbench.sweep.run_sweep` runs cells through when given a
cluster: the sweep keeps doing what it does for local cells (rounds, merging, committing each row,
progress, resume); only where cells run differs. Dask is imported when a cluster is asked for.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..harness.cell import Cell, failed_row

log = logging.getLogger(__name__)

#: ``local:N`` (a LocalCluster of N worker processes on this machine) or a scheduler address.
_LOCAL = re.compile(r"local:([0-9]+)")
_ADDRESS = re.compile(r"(tcp|tls|ucx|ws|wss)://[^\s:/]+(:[0-9]+)?/?")
CLUSTER_HELP = "local:N (N worker processes on this machine) or a scheduler address such as tcp://HOST:8786"
#: How long the client waits for a scheduler, and for a LocalCluster's workers to start.
CONNECT_TIMEOUT_S = 60.0
#: Resources a cell asks of a worker: one device. CPU backends ask for ``CPU``, every other backend for ``GPU``.
GPU, CPU = "GPU", "CPU"
INSTALL_HINT = "pip install 'kernel-workbench[cluster]' (dask[distributed])"


def parse_cluster(text: str) -> tuple[str, int | str]:
    """``"local:2"`` -> ``("local", 2)``; ``"tcp://host:8786"`` -> ``("address", "tcp://host:8786")``; anything
    else is a ValueError naming it and the valid forms."""
    value = str(text).strip()
    m = _LOCAL.fullmatch(value)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= 256:
            raise ValueError(f"--cluster {value!r}: a local cluster needs 1 to 256 workers")
        return "local", n
    if _ADDRESS.fullmatch(value):
        return "address", value
    raise ValueError(f"--cluster {value!r} is not understood; give {CLUSTER_HELP}")


def resources_for(backend: str) -> dict[str, float]:
    """The Dask resources a cell on ``backend`` needs: ``{"CPU": 1}`` for a CPU backend (numpy, numba,
    torch-cpu, PoCL, lavapipe, Triton's interpreter), ``{"GPU": 1}`` for any other device."""
    from ..backends import registry

    try:
        cls = registry.get(backend).device_class
    except ValueError:
        cls = "cpu"  # an unknown backend's cell only reports that it is unknown
    return {CPU if cls == "cpu" else GPU: 1}


class ClusterExecutor:
    """Cells run on Dask workers; rows come back to the client as they finish.

    ``cluster`` is ``local:N`` or a scheduler address (:func:`parse_cluster`); ``isolation`` and
    ``memory_cap`` say how each worker runs its cells (as for a local sweep). Close it to stop the
    workers' cell processes (and a local cluster).
    """

    isolation = "cluster"

    def __init__(self, cluster: str, *, isolation: str | None = None, memory_cap: str | int | None = None):
        kind, value = parse_cluster(cluster)
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ValueError(f"--cluster needs Dask distributed: {INSTALL_HINT}") from None
        self.address = str(cluster)
        self.isolation_in_worker, self.memory_cap = isolation, memory_cap
        self._local: Any = None
        self._batch = itertools.count()
        self._token = uuid.uuid4().hex[:8]
        try:
            if kind == "local":
                # Dask's INFO lines (scheduler, nannies, workers starting and stopping) would bury the sweep's
                # own output; the worker processes read the level from the environment they start with.
                os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
                logging.getLogger("distributed").setLevel(logging.ERROR)
                # One thread per worker: a worker measures one cell at a time. Each has ``CPU=1``: they share
                # this host, which their CPU rows say (:meth:`finish_row`).
                self._local = LocalCluster(n_workers=int(value), threads_per_worker=1, processes=True,
                                           resources={CPU: 1}, dashboard_address=None,
                                           scheduler_kwargs={"dashboard": False}, silence_logs=logging.ERROR)
                self.client = Client(self._local, timeout=CONNECT_TIMEOUT_S)
                self.client.wait_for_workers(int(value), timeout=CONNECT_TIMEOUT_S)
            else:
                self.client = Client(str(value), timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            self._close_local()
            raise ValueError(f"cannot reach the Dask cluster {self.address!r}: {exc}") from None
        self._hosts: dict[str, str] = {}  # worker address -> host

    # -- what the cluster offers ----------------------------------------
    def workers(self) -> dict[str, dict[str, Any]]:
        """The scheduler's workers by address (host, resources ...)."""
        try:
            info = self.client.scheduler_info(n_workers=-1)  # every worker (newer Dask lists only a few by default)
        except TypeError:  # Dask before 2025 lists them all and has no n_workers
            info = self.client.scheduler_info()
        return dict(info.get("workers", {}))

    def _refresh_hosts(self) -> dict[str, dict[str, Any]]:
        workers = self.workers()
        self._hosts.update({a: str(w.get("host") or _host_of(a)) for a, w in workers.items()})
        return workers

    def check_resources(self, cells: Iterable[Cell]) -> None:
        """Refuse, before submitting, cells that no worker of the cluster could take (they would wait
        forever): name the resource and how to start a worker that has it."""
        workers = self._refresh_hosts()
        offered = {r for w in workers.values() for r, n in (w.get("resources") or {}).items() if n >= 1}
        needed: dict[str, list[str]] = {}
        for c in cells:
            for r in resources_for(c.backend):
                needed.setdefault(r, []).append(c.backend)
        missing = {r: sorted(set(b)) for r, b in needed.items() if r not in offered}
        if missing:
            what = "; ".join(f"{r}=1 (for {', '.join(b)})" for r, b in missing.items())
            how = (f"start one with `dask worker {self.address} --nthreads 1 --resources {next(iter(missing))}=1`"
                   if self._local is None else "a local cluster offers CPU=1 only: for devices, start a scheduler "
                   "and one `dask worker --resources GPU=1` per device, then give --cluster tcp://HOST:8786")
            raise ValueError(f"no worker of the Dask cluster {self.address!r} ({len(workers)} worker(s), resources "
                             f"{sorted(offered) or 'none'}) offers {what}; {how}")

    # -- running cells --------------------------------------------------
    def run_cells(self, cells: list[Cell], job: Callable[[Cell], dict[str, Any]],
                  add_environment: Callable[[str, Mapping[str, Any]], None]) -> Iterator[tuple[Cell, dict[str, Any]]]:
        """Submit ``cells`` (in this order of priority) and yield ``(cell, row)`` as each finishes, once per
        cell. ``job(cell)`` gives the arguments of :meth:`CellExecutor.execute` but ``peaks``;
        ``add_environment(env_id, record)`` receives each worker machine's environment once. A cell whose
        workers all died (Dask gives up after a few) is yielded as ``crashed``. Stopping the iteration
        cancels the cells not yet run."""
        from distributed import as_completed

        from .task import run_cell

        if not cells:
            return
        self.check_resources(cells)
        batch = next(self._batch)
        futures = {}
        t0 = time.perf_counter()
        jobs = {cell.key: job(cell) for cell in cells}
        for i, cell in enumerate(cells):
            fut = self.client.submit(run_cell, cell, jobs[cell.key], self.isolation_in_worker, self.memory_cap,
                                     key=f"workbench-{self._token}-{batch}-{i}", pure=False,
                                     resources=resources_for(cell.backend), priority=len(cells) - i)
            futures[fut] = cell
        seen: set[str] = set()
        envs: set[str] = set()
        pending = set(futures)
        try:
            for fut in as_completed(list(futures)):
                pending.discard(fut)
                cell = futures[fut]
                if cell.key in seen:  # a cell is recorded once per round, whatever Dask did on the way
                    continue
                seen.add(cell.key)
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker, a worker's own error: the cell's row says it
                    why = f"the Dask workers running this cell were lost or failed: {type(exc).__name__}: {exc}"
                    yield cell, failed_row(cell, "crashed", why, seed=jobs[cell.key]["seed"], started=t0)
                    continue
                env_id = str(result["env_id"])
                if env_id not in envs and result.get("env") is not None:
                    add_environment(env_id, result["env"])
                    envs.add(env_id)
                row = dict(result["row"], env_id=env_id)
                row["cluster_workers_on_host"] = self._workers_on_host(str(result["address"]))
                yield cell, row
        finally:
            if pending:
                self.client.cancel(list(pending))

    def _workers_on_host(self, address: str) -> int:
        if address not in self._hosts:
            self._refresh_hosts()
        host = self._hosts.get(address, _host_of(address))
        alive = set(self.workers())
        return max(1, sum(1 for a, h in self._hosts.items() if h == host and a in alive))

    def finish_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row as merged over rounds, with the shared-host note: a CPU cell timed while other Dask
        workers shared its host is noisy (they ran cells side by side); a device cell gets the note only."""
        n = row.get("cluster_workers_on_host") or 1
        if n <= 1 or row.get("status") != "ok":
            return row
        note = (f"measured on a host shared with {n - 1} other Dask worker(s) (their cells ran side by side), "
                "for CPU timings run one worker per host")
        notes = [x for x in str(row.get("noise_note") or "").split("; ")
                 if x and not x.startswith("measured on a host")]
        row["noise_note"] = "; ".join([*notes, note])
        if resources_for(str(row.get("backend"))).get(CPU):
            row["noisy"] = True
        return row

    # -- the executor interface the sweep also uses ----------------------
    def prepare(self, backend: str) -> str | None:
        return None  # each worker prepares its backends before their first cell

    def execute(self, cell: Cell, config: Any, **kw: Any) -> dict[str, Any]:
        """One cell through the cluster (a sweep runs whole rounds through :meth:`run_cells`)."""
        kw.pop("peaks", None)
        kw.pop("should_stop", None)
        rows = [row for _, row in self.run_cells([cell], lambda c: dict(kw, config=config), lambda *a: None)]
        return rows[0]

    def close(self) -> None:
        try:
            from .task import close_states

            self.client.run(close_states)
        except Exception as exc:  # noqa: BLE001 - workers already gone: nothing of theirs to stop
            log.debug("closing the workers' cell processes: %s", exc)
        try:
            self.client.close()
        finally:
            self._close_local()

    def _close_local(self) -> None:
        if self._local is not None:
            self._local.close()
            self._local = None

    def __enter__(self) -> ClusterExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _host_of(address: str) -> str:
    """``tcp://10.0.0.5:40123`` -> ``10.0.0.5``."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]

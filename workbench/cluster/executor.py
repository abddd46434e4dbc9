"""The client's side of a sweep on Dask: connect, submit a round's cells with resources, yield rows as they come.

:class:`ClusterExecutor` is what :func:`workbench.sweep.driver.run_sweep` runs cells through when given a
cluster: the sweep keeps doing what it does for local cells (rounds, merging, committing each row,
progress, resume); only where cells run differs. Dask is imported when a cluster is asked for.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from typing import Any, TypedDict

from workbench.backends import registry
from workbench.cluster.security import check_security, local_security
from workbench.cluster.task import close_states, run_request
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.measure.executor import OnStart, ShouldStop, request_of
from workbench.measure.failures import failed_result
from workbench.measure.request import Cell, CellRequest, CheckOnly
from workbench.measure.result import CellResult
from workbench.measure.timer import Cancelled, TimingConfig

log = logging.getLogger(__name__)

#: ``local:N`` (a LocalCluster of N worker processes on this machine) or a scheduler address.
_LOCAL = re.compile(r"local:([0-9]+)")
_ADDRESS = re.compile(r"(tcp|tls|ucx|ws|wss)://[^\s:/]+(:[0-9]+)?/?")
CLUSTER_HELP = ("local:N (N worker processes on this machine) or a scheduler address such as tls://HOST:8786 "
                "(or tcp://HOST:8786)")
#: How long the client waits for a scheduler, and for a LocalCluster's Dask workers to start.
CONNECT_TIMEOUT_S = 60.0
#: Resources a cell asks of a Dask worker: one device. CPU backends ask for ``CPU``, every other backend for ``GPU``.
GPU, CPU = "GPU", "CPU"
INSTALL_HINT = "pip install 'kernel-workbench[cluster]' (dask[distributed], cryptography)"
#: The reason Dask gives the futures it cancels when the client loses its scheduler.
CONNECTION_LOST = "scheduler-connection-lost"
#: Loggers whose tracebacks a lost scheduler sets off (Dask's config gives the client's its own level).
_DASK_LOGGERS = ("distributed", "distributed.client", "distributed.utils")


class DaskWorker(TypedDict, total=False):
    """What the scheduler says of one Dask worker (``scheduler_info()["workers"]``), of which the executor reads
    the host and the resources it offers (``{"GPU": 1}``)."""

    host: str
    resources: dict[str, float]


class SchedulerLost(ConnectionError):
    """The client lost its Dask scheduler mid-run (it stopped, or the network failed).

    Why not crashed cells: the cells not yet back were never measured, and their Dask workers did nothing wrong.
    The run is interrupted: its stored rows stay, the rest stay unstored, and ``--resume RUN --cluster ...``
    finishes it on a scheduler that runs. ``address`` is the scheduler's (for the resume hint)."""

    def __init__(self, message: str, address: str) -> None:
        super().__init__(message)
        self.address = address


def parse_cluster(text: str) -> tuple[str, int | str]:
    """``"local:2"`` -> ``("local", 2)``; ``"tcp://host:8786"`` -> ``("address", "tcp://host:8786")``; anything
    else is a ValueError naming it and the valid forms."""
    value = str(text).strip()
    m = _LOCAL.fullmatch(value)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= 256:
            raise ValueError(f"--cluster {value!r}: a local cluster needs 1 to 256 Dask workers")
        return "local", n
    if _ADDRESS.fullmatch(value):
        return "address", value
    raise ValueError(f"--cluster {value!r} is not understood; give {CLUSTER_HELP}")


def resources_for(backend: str) -> dict[str, float]:
    """The Dask resources a cell on ``backend`` needs: ``{"CPU": 1}`` for a CPU backend (numpy, numba,
    torch-cpu, PoCL, lavapipe, Triton's interpreter), ``{"GPU": 1}`` for any other device."""
    try:
        cls = registry.get(backend).device_class
    except ValueError:
        cls = "cpu"  # an unknown backend's cell only reports that it is unknown
    return {CPU if cls == "cpu" else GPU: 1}


class ClusterExecutor:
    """Cells run on Dask workers; rows come back to the client as they finish.

    ``cluster`` is ``local:N`` or a scheduler address (:func:`parse_cluster`); ``isolation`` and
    ``memory_cap`` say how each Dask worker runs its cells (as for a local sweep). Close it to stop the Dask
    workers' worker processes (and a local cluster).

    ``security`` (a ``distributed.Security``) is for a ``tls://`` scheduler; without it Dask's configuration
    is read (``DASK_DISTRIBUTED__COMM__TLS__*``, :mod:`workbench.cluster.security`). A local cluster always
    talks TLS with credentials made for it alone (another user of this machine cannot join it or run code on
    its Dask workers); a plain ``tcp://`` scheduler is used with a warning.
    """

    isolation = "cluster"
    #: Cells run on the Dask workers' machines, which measure their own ceilings.
    runs_here = False

    def __init__(self, cluster: str, *, isolation: str | None = None, memory_cap: str | int | None = None,
                 security: Any = None):
        kind, value = parse_cluster(cluster)
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ValueError(f"--cluster needs Dask distributed: {INSTALL_HINT}") from None
        self.address = str(cluster).strip()
        self.isolation_in_worker, self.memory_cap = isolation, memory_cap
        self._local: Any = None
        self._local_workers = 0  # how many Dask workers a local cluster was started with
        self._batch = itertools.count()
        self._token = uuid.uuid4().hex[:8]
        #: Set once the scheduler is lost: nothing more is asked of it.
        self.lost = False
        self._log_levels: dict[str, int] = {}  # Dask's loggers as they were before they were quietened
        if kind == "local":
            security = local_security()
        else:
            security = check_security(str(value), security)
        self.security = security
        try:
            if kind == "local":
                # Dask's INFO lines (scheduler, nannies, workers starting and stopping) would bury the sweep's
                # own output; the worker processes read the level from the environment they start with.
                os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
                logging.getLogger("distributed").setLevel(logging.ERROR)
                # One thread per Dask worker: it measures one cell at a time. Each has ``CPU=1``: they share
                # this host, which their CPU rows say (:meth:`finish_row`).
                # TLS with credentials made for this cluster: on plain TCP any local user could run code on
                # its Dask workers as this user (issue 24).
                self._local = LocalCluster(n_workers=int(value), threads_per_worker=1, processes=True,
                                           resources={CPU: 1}, dashboard_address=None, security=security,
                                           scheduler_kwargs={"dashboard": False}, silence_logs=logging.ERROR)
                self.client = Client(self._local, timeout=CONNECT_TIMEOUT_S)
                self._local_workers = int(value)
                self.client.wait_for_workers(self._local_workers, timeout=CONNECT_TIMEOUT_S)
            else:
                self.client = Client(str(value), timeout=CONNECT_TIMEOUT_S, security=security)
        except (OSError, TimeoutError) as exc:
            self._close_local()
            raise ValueError(f"cannot reach the Dask cluster {self.address!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - another server answered (Dask reads its reply as garbage: a
            # MemoryError for a frame of exabytes), or TLS credentials of another fleet (an AssertionError)
            self._close_local()
            what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            tls = " and that the TLS credentials are those of its fleet" if self.address.startswith("tls") else ""
            raise ValueError(f"--cluster {self.address!r}: what answers there is no Dask scheduler that accepts this "
                             f"client ({what}); check that `dask scheduler` listens at that address{tls}") from None
        self._hosts: dict[str, str] = {}  # worker address -> host
        self._envs_sent: set[str] = set()  # environment ids whose record a result has carried

    # -- what the cluster offers ----------------------------------------
    def workers(self) -> dict[str, DaskWorker]:
        """The scheduler's Dask workers by address (host, resources ...); :class:`SchedulerLost` when the client
        has no scheduler (its cached list would be empty, and the cells' resources would look missing)."""
        self._check_connected()
        try:
            try:
                info = self.client.scheduler_info(n_workers=-1)  # every worker (newer Dask lists only a few)
            except TypeError:  # Dask before 2025 lists them all and has no n_workers
                info = self.client.scheduler_info()
        except OSError as exc:  # the scheduler went away while asked
            raise self._lost(f"{type(exc).__name__}: {exc}") from None
        self._check_connected()
        return dict(info.get("workers", {}))

    def _check_connected(self) -> None:
        status = str(getattr(self.client, "status", "running"))
        if self.lost or status != "running":
            raise self._lost(f"the client is {status}")

    def _lost(self, why: str) -> SchedulerLost:
        """The error that ends a run whose scheduler is gone; from now on nothing is asked of it, and Dask's
        reconnection attempts stay quiet (their tracebacks would bury the one line that says what to do)."""
        if not self.lost:
            self.lost = True
            for name in _DASK_LOGGERS:
                logger = logging.getLogger(name)
                self._log_levels.setdefault(name, logger.level)
                logger.setLevel(logging.CRITICAL)
        return SchedulerLost(f"lost the Dask scheduler {self.address} mid-run ({why}): it stopped, or the network "
                             "to it failed", self.address)

    def _refresh_hosts(self) -> dict[str, DaskWorker]:
        workers = self.workers()
        self._hosts.update({a: str(w.get("host") or _host_of(a)) for a, w in workers.items()})
        return workers

    def check_resources(self, cells: Iterable[Cell]) -> None:
        """Refuse, before submitting, cells that no Dask worker of the cluster could take (they would wait
        forever): name the resource and how to start a Dask worker that has it. A local cluster whose Dask
        worker died (its nanny restarts it: killed, or out of memory, on a loaded machine) is waited for first:
        its workers are coming back, and the run must not fail for that."""
        workers = self._refresh_hosts()
        if self._local is not None and len(workers) < self._local_workers:
            try:
                self.client.wait_for_workers(self._local_workers, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError):
                pass  # judged below on the workers there are, and named if too few
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
    def warm(self, backends: Sequence[str]) -> None:
        """Nothing to start: each Dask worker starts its worker processes."""

    def prepare(self, backend: str) -> str | None:
        return None  # each Dask worker prepares its backends before their first cell

    def run(self, requests: Iterable[CellRequest], *, should_stop: ShouldStop | None = None,
            on_start: OnStart | None = None) -> Iterator[tuple[CellRequest, CellResult]]:
        """Submit ``requests`` at once (in this order of priority) and yield each with its result as it
        finishes, once per cell. ``on_start`` is not called: cells start on the Dask workers, all at once. A cell
        whose Dask workers all died (Dask gives up after a few) comes back ``crashed``. ``should_stop`` is polled
        as results come; stopping, or closing the iterator, cancels the cells not yet run."""
        from distributed import as_completed

        requests = list(requests)
        if not requests:
            return
        self.check_resources([r.cell for r in requests])
        batch = next(self._batch)
        futures = {}
        t0 = time.perf_counter()
        for i, request in enumerate(requests):
            fut = self.client.submit(run_request, request, self.isolation_in_worker, self.memory_cap,
                                     key=f"workbench-{self._token}-{batch}-{i}", pure=False,
                                     resources=resources_for(request.cell.backend), priority=len(requests) - i)
            futures[fut] = request
        seen: set[str] = set()
        pending = set(futures)
        try:
            for fut in as_completed(list(futures)):
                pending.discard(fut)
                request = futures[fut]
                if request.cell.key in seen:  # a cell is recorded once per round, whatever Dask did on the way
                    continue
                seen.add(request.cell.key)
                yield request, self._result(fut, request, t0)
                if should_stop is not None and should_stop():
                    raise Cancelled("stopped as the cluster's cells came back")
        finally:
            if pending:
                self.client.cancel(list(pending))

    def _result(self, fut: Any, request: CellRequest, t0: float) -> CellResult:
        """The result a future holds, with how many Dask workers shared its host; the environment record is
        kept the first time its machine's id comes back."""
        try:
            res: CellResult = fut.result()
        except CancelledError as exc:  # not by us: the scheduler went away (or cancelled it): the cell never ran
            reason = str(getattr(exc, "reason", "") or "cancelled")
            raise self._lost("cancelled by Dask: " + reason if reason != CONNECTION_LOST else
                             "the connection closed") from None
        except Exception as exc:  # noqa: BLE001 - KilledWorker, a Dask worker's own error: the cell's result says it
            if str(getattr(self.client, "status", "running")) != "running":
                raise self._lost(f"{type(exc).__name__}: {exc}") from None
            why = f"the Dask workers running this cell were lost or failed: {type(exc).__name__}: {exc}"
            return failed_result(request.cell, Status.CRASHED, why, seed=request.seed, started=t0)
        env_id = str(res.placement.get("env_id"))
        if env_id in self._envs_sent:
            res.environment = None
        self._envs_sent.add(env_id)
        res.placement["cluster_workers_on_host"] = self._workers_on_host(str(res.placement.get("worker")))
        return res

    def _workers_on_host(self, address: str) -> int:
        """Dask workers alive on ``address``'s host; with the scheduler just lost, those last seen there (the
        cell's result is in hand: it is stored, and the run ends after it)."""
        try:
            if address not in self._hosts:
                self._refresh_hosts()
            alive = set(self.workers())
        except SchedulerLost:
            alive = set(self._hosts)
        host = self._hosts.get(address, _host_of(address))
        return max(1, sum(1 for a, h in self._hosts.items() if h == host and a in alive))

    def finish_row(self, row: RowDict) -> RowDict:
        """:func:`shared_host_note` of a row."""
        return shared_host_note(row)

    def execute(self, cell: Cell, config: TimingConfig | CheckOnly, **how: Any) -> RowDict:
        """One cell's row, through the cluster (a sweep runs whole rounds through :meth:`run`)."""
        how.pop("should_stop", None)
        ((_, res),) = self.run([request_of(cell, config, **how)])
        return res.to_row()

    def close(self) -> None:
        if not self.lost:
            try:
                self.client.run(close_states)
            except Exception as exc:  # noqa: BLE001 - Dask workers already gone: nothing of theirs to stop
                log.debug("closing the Dask workers' worker processes: %s", exc)
        try:
            if self.lost:  # nothing to wait for: a short close, whatever Dask says on the way
                with contextlib.suppress(Exception):
                    self.client.close(timeout=5)
            else:
                self.client.close()
        finally:
            self._close_local()
            for name, level in self._log_levels.items():
                logging.getLogger(name).setLevel(level)

    def _close_local(self) -> None:
        if self._local is not None:
            self._local.close()
            self._local = None

    def __enter__(self) -> ClusterExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shared_host_note(row: RowDict) -> RowDict:
    """A row as merged over rounds, with the shared-host note: a CPU cell timed while other Dask workers
    shared its host is noisy (they ran cells side by side); a device cell gets the note only. Rows that did not
    run on a cluster (no ``cluster_workers_on_host``) are returned as they are."""
    n = row.get("cluster_workers_on_host") or 1
    if n <= 1 or row.get("status") != Status.OK:
        return row
    note = (f"measured on a host shared with {n - 1} other Dask worker(s) (their cells ran side by side), "
            "for CPU timings run one Dask worker per host")
    notes = [x for x in str(row.get("noise_note") or "").split("; ") if x and not x.startswith("measured on a host")]
    row["noise_note"] = "; ".join([*notes, note])
    if resources_for(str(row.get("backend"))).get(CPU):
        row["noisy"] = True
    return row


def _host_of(address: str) -> str:
    """``tcp://10.0.0.5:40123`` -> ``10.0.0.5``."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]

"""Sweeps: the product of axes (kernel × variant × backend × dtype × size × mode × cache), run cell by cell.

A :class:`SweepSpec` is pure description and JSON-serialisable, so a run
stores the spec it was started with and ``--resume`` can rebuild the same
cells from it. :func:`run_sweep` measures the cells that a run does not have
yet, storing each row as it finishes.

With ``rounds`` > 1 every cell is measured once per round (see
:mod:`workbench.measure.rounds`): round 0 in the spec's order, each later round
in an order shuffled with a seeded RNG (seed from ``seed`` and the round
number, so the stored spec reproduces it). A cell's row is stored after every
round, so an interrupted sweep loses nothing and ``--resume`` runs the rounds
each cell is missing.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.cluster import ClusterExecutor, SchedulerLost
from workbench.core.status import Status
from workbench.measure.executor import CellExecutor, LocalExecutor
from workbench.measure.failures import failed_result
from workbench.measure.isolation import make_executor
from workbench.measure.request import Cell, CellRequest
from workbench.measure.speed_probe import bandwidth_probe_gbs, speed_probe_s
from workbench.measure.timer import Cancelled
from workbench.roofs.peaks import ensure_ceilings
from workbench.roofs.probe import cache_sizes
from workbench.roofs.throughput import Peaks
from workbench.store.database import Store, current_environment, open_store
from workbench.sweep.plan import SweepPlan
from workbench.sweep.request import RunOptions, SweepRequest
from workbench.sweep.run import Progress, StoredRun
from workbench.sweep.spec import DEFAULT_ROUNDS, SizeEntry, SweepSpec, shape_label  # noqa: F401  (users import them from here)

if TYPE_CHECKING:  # pandas costs ~0.25 s and 45 MB a process; loaded only to return a table
    import pandas as pd

log = logging.getLogger(__name__)

@dataclass
class SweepOutcome:
    run_id: str
    store: Store
    #: Rows of the cells measured by this call, in the sweep's cell order, as stored (all rounds so far;
    #: a resumed run's other rows are in the store).
    rows: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0

    def results(self) -> pd.DataFrame:
        """Every row of the run, including those from before a resume."""
        return self.store.results([self.run_id])


def run_sweep(spec: SweepSpec | None, store: Store | str | None = None, name: str | None = None,
              resume_run_id: str | None = None,
              on_cell: Callable[[dict[str, Any], int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, progress: bool = True,
              argv: Sequence[str] | None = None, retry_crashed: bool = False, isolation: str | None = None,
              memory_cap: str | int | None = None, cluster: Any = None,
              cluster_security: Any = None) -> SweepOutcome:
    """Measure every cell of ``spec`` once per round (or, with ``resume_run_id``, the rounds and cells
    that run is missing).

    A cell's row is committed to the store after each of its rounds; the cell about to run is recorded on
    the run first (``in_flight``), so a resume after the run died in a cell it ran in-process records that
    cell ``crashed`` and does not run it again unless ``retry_crashed`` (which also re-runs cells stored
    ``crashed``).
    Cells run where ``spec.isolation`` says (:mod:`workbench.measure.isolation`). Ctrl-C, or
    ``should_stop()`` returning True (polled between cells, and while a cell runs in a worker process),
    ends the sweep early with ``interrupted=True``; stored rows are kept and the run can be resumed.
    ``spec`` may be None when resuming: the run's stored spec is used; ``isolation`` and ``memory_cap``,
    when given, replace the spec's (they say how to run, not what to measure). ``on_cell(row, index, total)`` is
    called after every cell of every round with the cell's row so far; ``total`` is the number of cells
    and ``index + 1`` the progress in cells (visits done × cells / visits in all, rounded up), so a
    progress bar fills once whatever the rounds.
    ``cluster`` (``local:N``, a Dask scheduler address, or a :class:`workbench.cluster.ClusterExecutor`
    the caller closes): each round's cells run on Dask workers at once, and their rows are committed
    here as they come back (:mod:`workbench.cluster`); ``cluster_security`` (a ``distributed.Security``,
    :func:`workbench.cluster.tls_security`) is a ``tls://`` scheduler's client credentials. A scheduler lost
    mid-run leaves the run interrupted, its measured cells stored, and raises
    :class:`~workbench.cluster.SchedulerLost` saying how to resume.
    """
    options = RunOptions(store=store, name=name, resume_run_id=resume_run_id, retry_crashed=retry_crashed,
                         progress=progress, argv=argv, on_cell=on_cell, should_stop=should_stop,
                         isolation=isolation, memory_cap=memory_cap, cluster=cluster,
                         cluster_security=cluster_security)
    return run_request(SweepRequest(spec, options))


def run_request(request: SweepRequest) -> SweepOutcome:
    """Run one :class:`~workbench.sweep.request.SweepRequest` (checked here unless the caller has): the body of
    :func:`run_sweep`, which ``workbench bench`` calls with the request it built and checked."""
    t0 = time.perf_counter()
    request = request.checked()
    opts = request.options
    st = open_store(opts.store)
    plan = _plan(st, request)
    executor, owned = _executor_for(opts.cluster, plan, opts.cluster_security)  # an unreachable scheduler fails first
    try:
        env_id, env = current_environment()
        st.add_environment(env_id, env)
        run = StoredRun.open(st, plan, env_id, resume_run_id=opts.resume_run_id, name=opts.name, started=t0,
                             argv=opts.argv if opts.argv is not None else sys.argv, tag=opts.tag)
    except BaseException:
        if owned:
            executor.close()
        raise
    if run is None:  # a finished run with nothing left to do keeps its status and wall time
        if owned:
            executor.close()
        return SweepOutcome(run_id=str(opts.resume_run_id), store=st, wall_s=0.0)
    outcome = SweepOutcome(run_id=run.run_id, store=st)
    lost = _measure(plan, run, executor if not owned else _Owned(executor),
                    Progress(plan, opts.progress, opts.on_cell, opts.should_stop), outcome)
    run.raise_store_error(plan)
    if lost is not None:
        raise _interrupted_by(lost, st, run.run_id, len(plan.cells))
    return outcome


def _raise_probed_roofs(run: StoredRun) -> None:
    """Probed FLOP roofs that the run's correct rows went past become the rate those rows reached
    (:mod:`workbench.roofs.raised`); a store that refuses the write keeps the rows as they were."""
    from workbench.roofs.raised import raise_probed_roofs

    try:
        for roof in raise_probed_roofs(run.store, run.run_id):
            log.info("%s", roof.text())
    except sqlite3.DatabaseError as exc:
        log.warning("the probed roofs this run went past were not raised: %s", exc)


class _Owned:
    """An executor this sweep started (a local Dask cluster): closed when the sweep's rounds end."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor


def _measure(plan: SweepPlan, run: StoredRun, executor: Any, shown: Progress,
             outcome: SweepOutcome) -> SchedulerLost | None:
    """Run the plan's rounds and close the run: complete, or interrupted (Ctrl-C, cancel, a write the store
    refused, a lost scheduler, which is returned for the caller to raise once the run is closed)."""
    owned = isinstance(executor, _Owned)
    executor = executor.executor if owned else executor
    lost: SchedulerLost | None = None
    try:
        _run_rounds(plan, run, executor, shown)
    except (KeyboardInterrupt, Cancelled):
        outcome.interrupted = True
        run.stopped_on_purpose()
    except SchedulerLost as exc:  # an interrupted run, not crashed cells: the cells not back never ran
        outcome.interrupted, lost = True, exc
    except sqlite3.DatabaseError as exc:  # a full disk or a store made read-only, in any write: stop, keep the rest
        run.failed_to_write(exc)
        outcome.interrupted = True
    finally:
        if owned:
            executor.close()
        shown.close()
        outcome.rows, outcome.wall_s = plan.touched_rows(), run.wall_s
        _raise_probed_roofs(run)
        run.close(complete=not outcome.interrupted and not plan.missing())
    return lost


def _interrupted_by(lost: SchedulerLost, st: Store, run_id: str, cells: int) -> SchedulerLost:
    """The one line a run whose scheduler was lost ends with: what is stored, and the command that finishes it."""
    stored, complete, rounds = SweepPlan.stored_summary(st, run_id)
    return SchedulerLost(f"{lost}; run {run_id} is interrupted with {stored} of {cells} cells stored ({complete} "
                         f"with all {rounds} round{'s' if rounds != 1 else ''}): resume it with `workbench bench "
                         f"--resume {run_id} --cluster {lost.address}` once a scheduler runs there (or name "
                         "another)", lost.address)


def _plan(st: Store, request: SweepRequest) -> SweepPlan:
    """The plan of a new run (the request's cells, expanded once), or of the run being resumed (its stored
    spec when the request has none, and its stored rows)."""
    opts = request.options
    spec, stored = request.spec, {}
    if opts.resume_run_id is not None:
        run = st.run(opts.resume_run_id)
        if spec is None:
            if not run.get("spec"):
                raise ValueError(f"run {opts.resume_run_id!r} has no stored sweep spec to resume from")
            spec = opts.applied_to(SweepSpec.from_dict(run["spec"]))
        stored = {r["cell_key"]: r for r in st.rows(opts.resume_run_id)}
    assert spec is not None  # SweepRequest.checked refused a request with neither
    return SweepPlan(spec, stored, opts.retry_crashed, cells=request.cells)


def _executor_for(cluster: str | ClusterExecutor | None, plan: SweepPlan,
                  security: Any = None) -> tuple[CellExecutor, bool]:
    """Where the plan's cells run, and whether the sweep owns (closes) it: the spec's isolation here, or
    ``cluster`` (``local:N``, an address, or a :class:`~workbench.cluster.ClusterExecutor` the caller owns),
    checked to offer the resources the cells need (:mod:`workbench.cluster`)."""
    spec = plan.spec
    if cluster is None:
        return make_executor(spec.isolation, memory_cap=spec.memory_cap), True
    if isinstance(cluster, ClusterExecutor):
        cluster.check_resources(plan.cells)
        return cluster, False
    executor = ClusterExecutor(str(cluster), isolation=spec.isolation, memory_cap=spec.memory_cap,
                               security=security)
    try:
        executor.check_resources(plan.cells)
    except BaseException:
        executor.close()
        raise
    return executor, True


def _run_rounds(plan: SweepPlan, run: StoredRun, executor: CellExecutor, shown: Progress) -> None:
    """The plan's rounds through ``executor``, each result merged into its cell's row and stored as it comes."""
    shown.stage(f"starting workers ({', '.join(plan.backends())})")
    executor.warm(plan.backends())  # worker processes start side by side, not one per backend in turn
    ceilings = _ceilings(run, executor, plan, shown)

    def started(request: CellRequest) -> None:
        shown.start(request)
        run.mark(request, executor.isolation)

    llc_bytes = cache_sizes().llc if executor.runs_here else None
    for r, due in plan.rounds_due(interleaved=executor.runs_here):  # a cluster runs a round's cells at once
        shown.round(r, None if executor.runs_here else executor.isolation)
        if executor.runs_here:  # the machine's speed as this round starts (a cluster's machines are elsewhere)
            plan.speed_probe_s = speed_probe_s()
            plan.bandwidth_probe_gbs = (bandwidth_probe_gbs(llc_bytes) if plan.past_the_cache(due, llc_bytes)
                                        else None)
        if isinstance(executor, LocalExecutor):  # backends without a cell this round (extra rounds: most) free theirs
            executor.release({c.backend for c in plan.cells} - {c.backend for c in due})
        # asked for one by one as the executor takes them: a request reads the rows stored so far (a contender
        # is timed beside its baseline once the baseline's own visit of the round has passed)
        def requests(due: list[Cell] = due) -> Iterator[CellRequest]:
            for cell in due:
                why = plan.hung_before(cell)
                request = plan.request(cell, ceilings)
                if why is None:
                    yield request
                    continue
                # its variant hung at another size: recorded as a visit, timed out without running
                row = run.record(plan, request, failed_result(cell, Status.TIMEOUT, why, seed=request.seed,
                                                              started=time.perf_counter()))
                shown.advance(request, row, plan.keep(cell, row))

        with contextlib.closing(executor.run(requests(), should_stop=shown.poll, on_start=started)) as results:
            for request, result in results:  # closing a cluster's round early cancels its cells not yet run
                plan.note_hang(request.cell, result)
                row = run.record(plan, request, result)
                shown.advance(request, row, plan.keep(request.cell, row))


def _ceilings(run: StoredRun, executor: CellExecutor, plan: SweepPlan, shown: Progress) -> dict[str, Peaks]:
    """The ceilings behind ``% of peak`` of each backend the plan runs here, before its first cell: measured
    once per environment (the automatic probe, through ``executor``), stored. On a cluster each Dask worker
    measures its own machine's."""
    if not executor.runs_here:
        return {}
    found: dict[str, Peaks] = {}
    for backend in plan.backends():
        shown.stage(f"preparing {backend} and its ceilings (the roofs behind % of peak)")
        executor.prepare(backend)
        found[backend] = ensure_ceilings(run.store, run.env_id, backend, executor)
    return found

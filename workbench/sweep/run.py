"""The two things a sweep does besides running cells: keep its run in the store, and show its progress.

:class:`StoredRun` opens (or resumes) the run, marks the cell in flight, commits each row and ends the run
with a status that follows its cells; a store that cannot be written (a full disk, a read-only file)
becomes one :class:`~workbench.store.database.StoreError` that says what is stored. :class:`Progress` is the bar,
the ``on_cell`` callback and the elapsed time of the cell running.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

from workbench.catalog.loader import loaded_folders
from workbench.core.progress import LogProgress, TimeLeft, fmt_duration, join_status, make_progress
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.history.provenance import code_commits
from workbench.measure.request import CellRequest
from workbench.measure.result import CellResult
from workbench.store.database import Store, StoreError, describe_sqlite_error
from workbench.sweep.plan import StoredRow, SweepPlan

log = logging.getLogger(__name__)

#: How often the progress bar's "running N s" of the cell in flight is refreshed.
ELAPSED_REFRESH_S = 0.5
#: Seconds a later visit of a cell costs besides its warm-up and its share of the budget (the worker round
#: trip, the row merged and stored), until the sweep has measured one: the time-left estimate's prior.
LATER_VISIT_S = 0.25


class StoredRun:
    """A sweep's run in the store, claimed by this process while it is written."""

    def __init__(self, store: Store, run_id: str, env_id: str, *, started: float, previous_wall_s: float = 0.0) -> None:
        self.store, self.run_id, self.env_id = store, run_id, env_id
        self.previous_wall_s = previous_wall_s
        #: When the sweep started (``time.perf_counter()``).
        self.t0 = started
        #: The store error that ended the sweep, raised by :meth:`raise_store_error` once the run is closed.
        self.store_error: StoreError | None = None

    @classmethod
    def open(cls, store: Store, plan: SweepPlan, env_id: str, *, resume_run_id: str | None, name: str | None,
             argv: Sequence[str], started: float, tag: str | None = None) -> StoredRun | None:
        """A new run, or the resumed one (claimed, its in-flight cell blamed); None when a finished run has
        nothing left to do (it keeps its status and wall time). A new run records ``tag`` and the commit of
        each catalog folder loaded (its place on a history)."""
        if resume_run_id is None:
            run_id = store.new_run(name=name, suite=plan.spec.suite, argv=list(argv), env_id=env_id,
                                   spec=plan.spec.to_dict(), tag=tag, code_commits=code_commits(loaded_folders()))
            store.claim_run(run_id)
            return cls(store, run_id, env_id, started=started)
        run = store.run(resume_run_id)
        store.claim_run(resume_run_id)  # refuses a run that another live process is writing
        if run["status"] == "finished" and not plan.missing() and store.in_flight(resume_run_id) is None:
            store.release_run(resume_run_id)
            return None
        store.set_run_status(resume_run_id, "running")
        plan.blame_in_flight(store, resume_run_id, env_id)
        store.checkpoint()
        return cls(store, resume_run_id, env_id, started=started, previous_wall_s=float(run.get("wall_s") or 0.0))

    @property
    def wall_s(self) -> float:
        """Seconds of this sweep so far."""
        return time.perf_counter() - self.t0

    def mark(self, request: CellRequest, isolation: str) -> None:
        """Record the cell about to run here, so a resume after the process died in it can blame it."""
        self.store.set_in_flight(self.run_id, {"cell_key": request.cell.key, "label": request.cell.label,
                                               "round": request.round, "started_at": now_iso(),
                                               "isolation": isolation})

    def record(self, plan: SweepPlan, request: CellRequest, result: CellResult) -> StoredRow:
        """Merge ``result`` into its cell's row and commit it (with its machine's environment, when it ran
        elsewhere); returns the row."""
        if result.environment is not None:
            self.store.add_environment(str(result.placement.get("env_id")), result.environment)
        row = plan.merged(request.cell, result, self.run_id, self.env_id)
        self.store.record(row, run_wall_s=self.previous_wall_s + self.wall_s)
        return row

    def failed_to_write(self, exc: sqlite3.DatabaseError) -> None:
        self.store_error = StoreError(describe_sqlite_error(self.store.path, exc))

    def stopped_on_purpose(self) -> None:
        """Ctrl-C or ``should_stop``: the cell in flight is not to blame."""
        self._quietly(self.store.set_in_flight, self.run_id, None)

    def close(self, complete: bool) -> None:
        """End the run: finished only when every cell has all its rounds; released; checkpointed."""
        self._quietly(self.store.set_run_status, self.run_id, "finished" if complete else "interrupted",
                      wall_s=self.previous_wall_s + self.wall_s)
        self._quietly(self.store.release_run, self.run_id)
        self.store.checkpoint()  # the .sqlite file alone now holds every row

    def raise_store_error(self, plan: SweepPlan) -> None:
        if self.store_error is not None:
            raise StoreError(f"{self.store_error}; {plan.stored_cells()} of {len(plan.cells)} cells of run "
                             f"{self.run_id} are stored") from None

    @staticmethod
    def _quietly(fn: Callable[..., Any], *args: Any, **kw: Any) -> None:
        """A store update on the way out that must not hide the error that ended the sweep (a full disk)."""
        try:
            fn(*args, **kw)
        except sqlite3.DatabaseError as exc:
            log.warning("could not update the run on the way out: %s", exc)


class Progress:
    """The progress bar (when ``enabled``), the ``on_cell(row, index, cells)`` callback, and ``should_stop``
    as executors poll it (which also shows the running cell's elapsed time)."""

    def __init__(self, plan: SweepPlan, enabled: bool, on_cell: Callable[[StoredRow, int, int], None] | None,
                 should_stop: Callable[[], bool] | None) -> None:
        self.plan, self.on_cell, self.should_stop = plan, on_cell, should_stop
        self.bar = make_progress(plan.total, plan.done, enabled)  # tqdm on a terminal, lines on a log
        self._t0 = self._last = time.perf_counter()
        #: A cell is running (its elapsed time is shown); before the first, the sweep's stage is.
        self._running = False
        self._since: float | None = None  # the end of the last visit (or the start of the first)
        self._left: float | None = None  # the time left as estimated at ``_left_at``
        self._left_at: float | None = None
        spec = plan.spec
        self.clock = TimeLeft(plan.rounds, spec.budget_s / max(1, plan.rounds) + spec.warmup_s + LATER_VISIT_S)
        if isinstance(self.bar, LogProgress):
            self.bar.time_left = self.seconds_left

    def seconds_left(self) -> float | None:
        """Seconds the planned visits left will take, from what the visits so far cost (:class:`TimeLeft`)."""
        return self.clock.seconds_left({c.key: self.plan.remaining(c) for c in self.plan.cells})

    def stage(self, what: str) -> None:
        """What the sweep does before its first cell (starting workers, probing ceilings), on the bar."""
        self._t0 = time.perf_counter()
        if self.bar is not None:
            self.bar.set_postfix_str("", refresh=False)
            self.bar.set_description_str(what, refresh=True)

    def round(self, r: int, where: str | None) -> None:
        """A round starts (``where``: the cluster its cells run on, all at once; None: here, one by one)."""
        if self.bar is not None and where is not None:
            self.bar.set_description_str(f"round {r + 1}/{self.plan.rounds} on {where}", refresh=True)

    def start(self, request: CellRequest) -> None:
        """A cell starts here: its label on the bar, and its clock."""
        self._t0 = self._last = time.perf_counter()
        self._running = True
        if self._since is None:  # the first visit: what came before it (workers, ceilings) is no visit's cost
            self._since = self._t0
        if self.bar is not None:
            label = request.cell.label
            self.bar.set_group(request.cell.kernel if self.plan.rounds == 1 else
                               f"{self.plan.round_label(request)}: {request.cell.kernel}")
            self.bar.set_description_str(label if self.plan.rounds == 1 else
                                         f"{self.plan.round_label(request)}: {label}", refresh=True)

    def poll(self) -> bool:
        """``should_stop()``, showing the running cell's elapsed time on the bar."""
        now = time.perf_counter()
        if self.bar is not None and self._running and now - self._last >= ELAPSED_REFRESH_S:
            self._last = now
            self.bar.set_postfix_str(self._with_left(f"running {now - self._t0:.1f} s"), refresh=True)
        return self.should_stop is not None and self.should_stop()

    def advance(self, request: CellRequest, row: StoredRow, step: int) -> None:
        """A cell's row is stored: ``step`` visits done."""
        now = time.perf_counter()
        self.clock.add(request.cell.key, now - (self._since if self._since is not None else now),
                       first=request.round <= 1)
        self._since, self._running = now, False
        if self.bar is not None:
            self.bar.update(step)
            self.bar.set_postfix_str(self._with_left(_postfix(row)), refresh=False)
        if self.on_cell is not None:
            try:
                self.on_cell(row, self.plan.progress_index(), len(self.plan.cells))
            except Exception:  # noqa: BLE001 - a display problem must not stop the measurements
                log.exception("on_cell callback failed for %s", request.cell.label)

    def _with_left(self, status: str) -> str:
        """The bar's postfix: ``status``, and on a terminal the time left (a log line says it already), as
        estimated when the last visit ended, less the time since (a poll beside a timed cell does no more)."""
        if isinstance(self.bar, LogProgress):
            return status
        now = time.perf_counter()
        if self._left_at is None or self._left_at < (self._since or 0.0):
            self._left, self._left_at = self.seconds_left(), now
        left = None if self._left is None else max(0.0, self._left - (now - self._left_at))
        return join_status(status, f"about {fmt_duration(left)} left" if left is not None else "")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _postfix(row: StoredRow) -> str:
    if row.get("status") != Status.OK:
        return str(row.get("status"))
    med = row.get("median_s")
    status = "ok~" if row.get("noisy") else "ok"
    return f"{status} {med * 1e6:.1f} µs" if med else status

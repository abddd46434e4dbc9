"""The parent's clock of a cell in a worker process: where the cell is (build, first call, run) and when the
parent gives up on it. The worker's messages move it from phase to phase; each phase has its own deadline."""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil

from workbench.measure.first_call_watch import FirstCallWatch
from workbench.measure.messages import FirstCallDone, JobMessage, RunStarted
from workbench.measure.request import CellRequest

#: Share of a first call's limit after which its worker is suspected hung and a spare worker is started beside
#: it: a kill then finds a worker ready (a start costs 1-3 s under load, paid while the parent only waits).
SPARE_AT = 0.5


@dataclass
class PhaseClock:
    """One cell's phase ("build", "first call" or "run") and deadlines, as the parent waiting on it sees them."""

    request: CellRequest
    job_id: int
    #: Extra time past a limit before the worker is killed, so a cell that stops by itself keeps its samples.
    grace_s: float
    #: How long the parent sleeps between looks: a starved first call is waited on by this much at a time.
    poll_s: float
    phase: str = "build"
    deadline: float = 0.0
    run_deadline: float = 0.0
    #: When a first call still running looks hung (:data:`SPARE_AT` of its limit).
    suspect_at: float = 0.0
    #: The worker's CPU use during its first call (:mod:`.first_call_watch`).
    watch: FirstCallWatch | None = None

    @classmethod
    def building(cls, request: CellRequest, job_id: int, grace_s: float, poll_s: float) -> PhaseClock:
        """The clock of a cell just sent: its build limit runs."""
        deadline = time.perf_counter() + request.build_timeout_s + grace_s
        return cls(request, job_id, grace_s, poll_s, deadline=deadline, run_deadline=deadline, suspect_at=deadline)

    def hear(self, msg: object, proc: psutil.Process) -> None:
        """The worker says the run started (the first call's limit, then the run's, apply) or the first call
        returned (the run limit applies); other messages, and those of other jobs, change nothing."""
        if not isinstance(msg, JobMessage) or msg.job_id != self.job_id:
            return
        if isinstance(msg, RunStarted):
            now, first_call_s, timeout_s = time.perf_counter(), self.request.first_call_limit_s, self.request.timeout_s
            self.phase, self.deadline = "run", now + timeout_s + self.grace_s
            self.run_deadline = self.deadline
            if first_call_s < timeout_s:  # a hung first call is stopped after its own limit
                self.phase = "first call"
                self.deadline = now + first_call_s + min(self.grace_s, 0.1 * first_call_s + 0.2)
                self.suspect_at = now + SPARE_AT * first_call_s
                self.watch = FirstCallWatch.start(proc, first_call_s)
        elif isinstance(msg, FirstCallDone):
            self.phase, self.deadline, self.watch = "run", self.run_deadline, None

    def suspect(self) -> bool:
        """The first call has run past :data:`SPARE_AT` of its limit."""
        return self.phase == "first call" and time.perf_counter() > self.suspect_at

    def expired(self) -> bool:
        """Past the deadline of the phase: a first call that waits for a core is not hung yet (its deadline
        moves on by a poll, never past the run's)."""
        if self.watch is not None:
            self.watch.sample()
        if time.perf_counter() > self.deadline and self.watch is not None and self.deadline < self.run_deadline \
                and self.watch.starved():  # the first call waits for a core: not hung yet
            self.deadline = min(self.run_deadline, time.perf_counter() + self.poll_s)
        return time.perf_counter() > self.deadline

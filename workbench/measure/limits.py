"""A cell's time limits: building it, its first call, running it; shared with the side that waits for it."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from workbench.measure.first_call_watch import FirstCallWatch
from workbench.measure.request import CellRequest
from workbench.measure.timer import Cancelled


class CellTimeout(Exception):
    """The cell ran past its deadline (the message says which limit)."""


@dataclass
class Limits:
    """A cell's two time limits: building it, then running it (the run's clock starts after the build)."""

    build_deadline: float
    build_s: float
    run_s: float
    run_deadline: float = math.inf
    #: Called when the run starts (a worker process tells its parent, whose clock moves to the run limit).
    on_run: Callable[[], None] | None = None
    #: The first call's own limit (:attr:`CellRequest.first_call_limit_s`), counted from the run's start; its
    #: deadline stands until :meth:`first_call_done`.
    first_call_s: float = math.inf
    first_call_deadline: float = math.inf
    #: Called when the first call has returned (a worker process tells its parent: the run limit applies).
    on_first_call: Callable[[], None] | None = None
    #: This process's CPU use during the first call, started by the waiting side's first look at the
    #: deadline: past its limit, a first call starved of a core is waited on (:mod:`.first_call_watch`).
    watch: FirstCallWatch | None = None

    @classmethod
    def starting_now(cls, build_s: float, run_s: float, on_run: Callable[[], None] | None = None,
                     first_call_s: float = math.inf, on_first_call: Callable[[], None] | None = None) -> Limits:
        return cls(build_deadline=time.perf_counter() + build_s, build_s=build_s, run_s=run_s, on_run=on_run,
                   first_call_s=first_call_s, on_first_call=on_first_call)

    @classmethod
    def of(cls, request: CellRequest, on_run: Callable[[], None] | None = None,
           on_first_call: Callable[[], None] | None = None) -> Limits:
        """The request's limits (build, first call, run), starting now."""
        return cls.starting_now(request.build_timeout_s, request.timeout_s, on_run, request.first_call_limit_s,
                                on_first_call)

    @property
    def in_first_call(self) -> bool:
        """The run has started and its first call, under its own limit, has not returned yet."""
        return self.first_call_deadline < math.inf

    def hard_deadline(self, grace_s: float) -> float:
        """When the waiting side gives up: the build deadline until the run starts, then the first call's
        until it returns, then the run's."""
        if self.run_deadline == math.inf:
            return self.build_deadline + grace_s
        if self.in_first_call and self.first_call_deadline < self.run_deadline:
            self._wait_on_starved_first_call(grace_s)
        return min(self.run_deadline, self.first_call_deadline) + grace_s

    def _wait_on_starved_first_call(self, grace_s: float) -> None:
        if self.watch is None:
            self.watch = FirstCallWatch.start(psutil.Process(), self.first_call_s)
            return
        now = time.perf_counter()
        if now > self.first_call_deadline + grace_s and self.watch.starved():
            self.first_call_deadline = min(self.run_deadline, now - grace_s + 0.05)
        else:
            self.watch.sample()

    def start_run(self) -> float:
        now = time.perf_counter()
        self.run_deadline = now + self.run_s
        if self.first_call_s < self.run_s:
            self.first_call_deadline = now + self.first_call_s
        if self.on_run is not None:
            self.on_run()
        return self.run_deadline

    def first_call_done(self) -> None:
        if self.first_call_deadline < math.inf:
            self.first_call_deadline = math.inf
            if self.on_first_call is not None:
                self.on_first_call()


def deadline_check(deadline: float, cancel: threading.Event | None, what: str, limit_s: float | None = None
                   ) -> None:
    """Raise :class:`Cancelled` when the sweep gave up on the cell, :class:`CellTimeout` past ``deadline``
    (``what`` says where the cell was)."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled")
    if time.perf_counter() > deadline:
        raise CellTimeout(f"timed out {what}" + (f" (limit {limit_s:g} s)" if limit_s is not None else ""))


@dataclass(frozen=True)
class Clock:
    """A cell's run deadline, its limit (for messages) and its cancel event, checked between steps."""

    deadline: float
    limit_s: float
    cancel: threading.Event | None

    #: Tells the waiting side the first call returned (:meth:`Limits.first_call_done`).
    first_call_done: Callable[[], None] | None = None

    def check(self, what: str) -> None:
        deadline_check(self.deadline, self.cancel, what, self.limit_s)

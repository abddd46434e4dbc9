"""Run cells on a worker thread of this process: the ``in-process`` isolation, for debugging.

By default cells run in worker processes (:mod:`workbench.measure.process_worker`);
this thread worker serves ``--in-process`` runs, where a debugger and prints reach
the kernel and nothing has to be pickled. A thread shares the interpreter,
device contexts and JIT caches, so it cannot survive a crash. The timing loop
checks the cell's deadline between calls; a call that never returns is
abandoned: its thread is left to finish on its own (it is a daemon and is told
to stop at its next check), the cell is recorded as ``timeout`` and the next
cell starts on a fresh thread.

The limit of this choice: native code that holds the GIL forever (a numba
``nopython`` loop without ``nogil``) blocks the whole interpreter; only killing
the process ends it. The store keeps every finished cell, so ``--resume`` after
killing it loses nothing but the hung cell.

Ctrl-C reaches the main thread, which is only ever waiting here, so an
interrupt is honoured within ~50 ms even while a kernel is running.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from workbench.core.threads import carried_to_another_thread


class WorkerTimeout(Exception):
    """The job did not finish within its limit; its thread was abandoned."""


class _Job:
    def __init__(self, fn: Callable[[threading.Event], Any]):
        self.fn = fn
        self.cancel = threading.Event()
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class CellWorker:
    """A single daemon thread that runs one job at a time, replaced when a job is abandoned."""

    def __init__(self, name: str = "workbench-cell") -> None:
        self._name = name
        self._queue: queue.Queue[_Job | None] | None = None
        self._thread: threading.Thread | None = None
        self._abandoned: list[threading.Thread] = []

    def _ensure(self) -> queue.Queue[_Job | None]:
        if self._thread is None or not self._thread.is_alive() or self._queue is None:
            q: queue.Queue[_Job | None] = queue.Queue()
            t = threading.Thread(target=self._loop, args=(q,), name=self._name, daemon=True)
            t.start()
            self._queue, self._thread = q, t
        return self._queue

    @staticmethod
    def _loop(q: queue.Queue[_Job | None]) -> None:
        while True:
            job = q.get()
            if job is None:
                return
            try:
                job.result = job.fn(cancel=job.cancel)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                job.error = exc
            finally:
                job.done.set()

    def run(self, fn: Callable[[threading.Event], Any], timeout_s: float,
            deadline: Callable[[], float] | None = None) -> Any:
        """Run ``fn(cancel=event)`` on the worker; wait at most ``timeout_s``, or, with ``deadline``, until
        the ``time.perf_counter()`` value it returns (asked again at every poll, so a job can move its own
        limit: a cell's run limit starts only when its build is done).

        Raises :class:`WorkerTimeout` after abandoning the worker, re-raises what
        ``fn`` raised, and on KeyboardInterrupt sets the job's cancel event and
        abandons the worker before propagating.
        """
        carry = carried_to_another_thread()  # numba's thread count is per thread: the caller's, on the cell thread

        def on_cell_thread(cancel: threading.Event) -> Any:
            carry()
            return fn(cancel=cancel)

        job = _Job(on_cell_thread)
        q = self._ensure()
        q.put(job)
        t0 = time.perf_counter()
        limit = deadline if deadline is not None else (lambda: t0 + timeout_s)
        try:
            while not job.done.wait(0.05):
                if time.perf_counter() > limit():
                    self._abandon(job)
                    raise WorkerTimeout(f"no result after {time.perf_counter() - t0:.3g} s")
        except KeyboardInterrupt:
            self._abandon(job)
            raise
        if job.error is not None:
            raise job.error
        return job.result

    def _abandon(self, job: _Job) -> None:
        job.cancel.set()
        if self._queue is not None:
            self._queue.put(None)  # the old thread exits after its current job
        if self._thread is not None:
            self._abandoned.append(self._thread)
        self._queue = self._thread = None

    def still_running_abandoned(self) -> int:
        """How many abandoned jobs are still running (their work may disturb later timings)."""
        self._abandoned = [t for t in self._abandoned if t.is_alive()]
        return len(self._abandoned)

    def close(self) -> None:
        if self._queue is not None:
            self._queue.put(None)
        self._queue = self._thread = None

"""The adaptive timing loop shared by every backend.

Modelled on triton's ``do_bench`` and ``torch.utils.benchmark``'s
``blocked_autorange``: warm up by time, batch calls that are too short to time
one by one, then take samples until the relative spread (IQR / median) is
below a target or the budget is spent. Timing itself goes through
``backend.timer()`` so device events are used where the runtime has them.

Every loop is audited (:mod:`workbench.harness.audit`): random samples are checked against the reference of
inputs changed just before them, so a kernel cannot tell a timed call from a checked one; the harness's own
clock watches the timer, and a replaced timer, statistic or check function fails the cell.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends.base import Backend, Timer
from ..case import Case
from .audit import DEVICE_EVENT_TIMERS, GUARD, Auditor, NoAudit, check_device_tail, check_timer
from .stats import relative_spread

#: The harness's clock, bound at import (a kernel replacing ``time.perf_counter`` does not reach it).
_clock = time.perf_counter

CACHE_MODES = ("hot", "cold")


class Cancelled(Exception):
    """The sweep gave up on this cell (Ctrl-C, or its worker was abandoned after a timeout)."""


@dataclass
class TimingConfig:
    """How hard to try for a stable number; the defaults suit interactive use."""

    warmup_s: float = 0.1
    #: Stop sampling once IQR / median is at or below this.
    target_spread: float = 0.02
    min_samples: int = 5
    max_samples: int = 1000
    #: Wall time for sampling (after warm-up); the loop still takes ``min_samples``.
    budget_s: float = 0.5
    #: Very short kernels are batched so one sample lasts at least this long.
    min_sample_s: float = 100e-6
    max_calls_per_sample: int = 10_000
    #: "hot": back-to-back calls. "cold": ``backend.flush_cache()`` before every sample.
    cache: str = "hot"
    #: Input sets rotated between calls so a kernel cannot replay a cached answer.
    n_inputs: int = 3

    def __post_init__(self) -> None:
        if self.cache not in CACHE_MODES:
            raise ValueError(f"unknown cache mode {self.cache!r}; valid cache modes: {', '.join(CACHE_MODES)}")
        if self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError(f"need 1 <= min_samples <= max_samples, got {self.min_samples}, {self.max_samples}")
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be at least 1, got {self.n_inputs}")


@dataclass
class Timing:
    """Raw per-call samples and how the loop got them."""

    samples_s: list[float] = field(default_factory=list)  # device time per call
    host_samples_s: list[float] = field(default_factory=list)  # host (launch) time per call
    calls_per_sample: int = 1
    warmup_calls: int = 0
    #: "spread", "budget", "max_samples" or "deadline"
    stopped_by: str = ""
    #: Audited timed calls, input changes between samples, and the seconds both took (outside timed regions).
    audits: int = 0
    input_changes: int = 0
    audit_s: float = 0.0
    #: What the first failed audit found (its message names the class), or "".
    audit_failure: str = ""


def _noop() -> None:
    return None


_overheads: dict[str, float] = {}
_overheads_lock = threading.Lock()


def timer_overhead(backend: Backend, n: int = 50) -> float:
    """Median time the backend's timer reports for an empty function, measured once per backend.

    Recorded beside every row rather than subtracted: batching keeps samples at
    ``min_sample_s`` or more, where the overhead is a small fraction, and
    subtracting a noisy estimate can push short samples below zero.
    """
    with _overheads_lock:
        if backend.name in _overheads:
            return _overheads[backend.name]
    timer = backend.timer()
    for _ in range(3):
        timer.measure(_noop)
    samples = sorted(timer.measure(_noop).device_s for _ in range(n))
    value = samples[len(samples) // 2]
    with _overheads_lock:
        _overheads[backend.name] = value
    return value


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled")


def _batches(calls: Sequence[Callable[[], Any]], k: int) -> list[Callable[[], None]]:
    """One zero-argument function per rotation offset, each running ``k`` calls in rotation."""
    m = len(calls)

    def make(offset: int) -> Callable[[], None]:
        seq = [calls[(offset + i) % m] for i in range(k)]
        if k == 1:
            return seq[0]

        def batch() -> None:
            for f in seq:
                f()
        return batch

    return [make(r) for r in range(m)]


def time_calls(timer: Timer, calls: Sequence[Callable[[], Any]], config: TimingConfig, *,
               audit: Auditor | NoAudit, flush: Callable[[], None] | None = None, deadline: float = math.inf,
               cancel: threading.Event | None = None, sync: Callable[[], None] | None = None) -> Timing:
    """Time ``calls`` (one per input set, used in rotation) adaptively, under ``audit``.

    ``flush`` runs before every sample when ``config.cache == "cold"``, outside
    the timed region. Cold samples are single calls: the second call of a batch
    would find the cache warm again. ``deadline`` (a ``time.perf_counter``
    value) ends the loop early even below ``min_samples``; the caller decides
    what that means. ``audit`` (required: no loop times a variant unaudited) may change inputs before a
    sample and check its output after; a wrong output, a timer that disagrees with the harness's clock or a
    replaced harness function raises :class:`~workbench.harness.audit.AuditFailed`, and so does, with event
    timers, a device still busy after a sample's end event (``sync``: the whole device's synchronisation,
    which ends every such sample); a wrong audited output
    is reported in ``Timing.audit_failure`` (the loop's timings are kept, for the caller to flag).
    """
    if not calls:
        raise ValueError("time_calls needs at least one call")
    GUARD.check()
    try:
        out = _loop(timer, calls, config, audit, flush, deadline, cancel, sync)
    finally:
        audit.restore()
    GUARD.check()
    out.audits, out.input_changes, out.audit_s = audit.audits, audit.changes, audit.seconds
    out.audit_failure = str(audit.failure) if audit.failure is not None else ""
    return out


class _Watch:
    """The timer's reported totals beside the harness's own clock around the same samples."""

    def __init__(self, timer: Timer, sync: Callable[[], None] | None, watch: bool) -> None:
        self.timer, self.kind = timer, timer.kind
        self.samples: list[tuple[float, float]] = []
        #: Event timers stop at an event on their stream: the whole device is synchronised after each sample.
        self.sync = sync if watch and timer.kind in DEVICE_EVENT_TIMERS else None

    def measure(self, fn: Callable[[], Any]) -> Any:
        t0 = _clock()
        s = self.timer.measure(fn)
        self.samples.append((s.device_s, _clock() - t0))
        if self.sync is not None:
            t1 = _clock()
            self.sync()
            check_device_tail(self.kind, s.device_s, _clock() - t1)
        return s

    def check(self) -> None:
        check_timer(self.kind, self.samples)


def _loop(timer: Timer, calls: Sequence[Callable[[], Any]], config: TimingConfig, audit: Auditor | NoAudit,
          flush: Callable[[], None] | None, deadline: float, cancel: threading.Event | None,
          sync: Callable[[], None] | None) -> Timing:
    cold = config.cache == "cold"
    out = Timing()
    m = len(calls)
    watch = _Watch(timer, sync, audit.watch_timer)

    # Warm-up by time, at least one call: absorbs lazy initialisation and caches
    # of the runtime, and tells us how long one call takes.
    warm: list[float] = []
    start = time.perf_counter()
    while True:
        _check(cancel)
        if cold and flush is not None:
            flush()
        i = len(warm) % m
        fn = audit.arm(i, 1, False, calls) or calls[i]
        warm.append(watch.measure(fn).device_s)
        audit.check()
        now = time.perf_counter()
        if now - start >= config.warmup_s or now >= deadline:
            break
    out.warmup_calls = len(warm)
    recent = sorted(warm[-5:])
    per_call = max(recent[len(recent) // 2], 1e-9)

    k = 1 if cold else int(min(config.max_calls_per_sample, max(1, math.ceil(config.min_sample_s / per_call))))
    out.calls_per_sample = k
    batches = _batches(calls, k)

    end = min(time.perf_counter() + config.budget_s, deadline)
    j = 0
    while True:
        _check(cancel)
        if cold and flush is not None:
            flush()
        r = j % len(batches)
        fn = audit.arm(r, k, True, calls) or batches[r]
        s = watch.measure(fn)
        audit.check()
        j += 1
        out.samples_s.append(s.device_s / k)
        out.host_samples_s.append(s.host_s / k)
        n = len(out.samples_s)
        if n >= config.max_samples:
            out.stopped_by = "max_samples"
            break
        if n >= config.min_samples and relative_spread(out.samples_s) <= config.target_spread:
            out.stopped_by = "spread"
            break
        now = time.perf_counter()
        if now >= end and n >= config.min_samples:
            out.stopped_by = "budget"
            break
        if now >= deadline:
            out.stopped_by = "deadline"
            break
    last = audit.pending(calls)
    if last is not None:  # the loop's certain audit, when its chosen sample never came: one more call
        watch.measure(last)
        audit.check()
    if audit.watch_timer:
        watch.check()
    return out


#: The loop ``verify`` runs after its checks: calls that look like timed ones (the same output buffer, holding
#: the previous answer; inputs in rotation), every sample audited (a check costs nothing here). Its samples
#: are not kept.
EXERCISE = TimingConfig(warmup_s=0.0, min_samples=4, max_samples=4, budget_s=0.0, min_sample_s=0.0)


def exercise(timer: Timer, case: Case, sets: Sequence[tuple[dict[str, Any], dict[str, Any]]], *,
             deadline: float = math.inf, cancel: threading.Event | None = None) -> Timing:
    """:data:`EXERCISE` on ``case`` over ``sets`` (device inputs, host inputs) under an
    :class:`~workbench.harness.audit.Auditor`: a check-only run still sees calls it cannot tell from timed ones."""
    out = case.outputs
    calls = [(lambda inp=inp: case.call(inp, out)) for inp, _ in sets]
    audit = Auditor(case, sets, out, min_samples=EXERCISE.min_samples, probability=1.0, cost_share=math.inf)
    timing = time_calls(timer, calls, EXERCISE, audit=audit, deadline=deadline, cancel=cancel,
                        sync=case.backend.synchronize)
    if audit.failure is not None:
        raise audit.failure
    return timing


GUARD.snapshot()  # time_calls and this module's helpers, now that they exist

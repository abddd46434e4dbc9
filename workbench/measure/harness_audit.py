"""The timer and the harness, audited: what a timer reports is held against the harness's own clock, and the
functions the harness measures and checks with are held against replacement.

- :func:`check_timer` compares what the timer reported with the harness's own clock;
- :func:`check_device_tail` and :func:`reset_persisting_l2` are the GPU forms: event-timed samples end with
  a synchronisation of the whole device; no L2 lines stay pinned from one cell to the next;
- :class:`HarnessGuard` notices a replaced timer, statistic or check function (and puts the original back).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from workbench.backends import registry
from workbench.backends.base import Timer
from workbench.backends.timer_clocks import HOST_CLOCK_TIMERS  # timers reading the host clock
from workbench.measure.gaming import FINISHES_LATER, TAMPERS, AuditFailed

#: Slack per sample for the timer's own synchronisation and call overhead.
TIMER_SLACK_S = 50e-6


def check_timer(kind: str, samples: Sequence[tuple[float, float]]) -> None:
    """The timer's (reported, harness clock) seconds of each sample: more than the harness's clock saw around a
    sample is impossible for any timer; far less, in most samples, is impossible for a host-clock timer (a few
    samples may lose the interpreter to another thread outside the timer's window). Raises
    :class:`AuditFailed` naming :data:`TAMPERS`."""
    over = [(r, c) for r, c in samples if r > c * 1.05 + TIMER_SLACK_S]
    if over:
        r, c = over[0]
        raise AuditFailed(f"audit: the timer reported {r:.3g} s for a sample the harness's clock saw take {c:.3g} s "
                          f"({TAMPERS})", TAMPERS)
    under = [(r, c) for r, c in samples if r < 0.5 * c - TIMER_SLACK_S]
    if kind in HOST_CLOCK_TIMERS and samples and len(under) > len(samples) / 2:
        reported, clock = sum(r for r, _ in samples), sum(c for _, c in samples)
        raise AuditFailed(f"audit: the {kind} timer reported {reported:.3g} s for {len(samples)} samples the "
                          f"harness's clock saw take {clock:.3g} s ({TAMPERS})", TAMPERS)


class EventTimerKinds:
    """Timer kinds whose time is between events on one stream, as the runtimes declare them
    (:attr:`~workbench.backends.runtime.Runtime.event_timers`): work left on another stream escapes them."""

    def __contains__(self, kind: object) -> bool:
        return any(kind in rt.event_timers for rt in registry.runtimes())

    def __iter__(self) -> Iterator[str]:
        return iter([kind for rt in registry.runtimes() for kind in rt.event_timers])


#: Timer kinds whose time is between events on one stream (read from the runtimes' declarations when asked).
DEVICE_EVENT_TIMERS = EventTimerKinds()
#: The device may take this long (or half the sample, if more) to go idle after a sample's end event.
DEVICE_TAIL_S = 200e-6


#: A loop fails the tail check at this many long tails (each after a sample whose synchronisation held its core),
#: once they are at least this share of its samples. On an H200 a torch GEMM of 27 µs once read a 4 ms tail
#: (one sample of hundreds, a sibling worker busy on the host): one long tail is the host's, not the device's.
TAILS_TO_FAIL = 2
TAIL_SHARE_TO_FAIL = 0.25


def tail_is_long(kind: str, reported_s: float, tail_s: float) -> bool:
    """Whether a synchronisation of the whole device after an event-timed sample took longer than the device
    needs to go idle (:data:`DEVICE_TAIL_S`, or half the sample)."""
    return kind in DEVICE_EVENT_TIMERS and tail_s > max(DEVICE_TAIL_S, 0.5 * reported_s)


def check_device_tail(kind: str, reported_s: float, tail_s: float) -> None:
    """After an event-timed sample, the time a synchronisation of the whole device took: work still running
    after the end event (another stream, a graph launched elsewhere) was not in the sample. Raises
    :class:`AuditFailed` naming :data:`FINISHES_LATER`."""
    if tail_is_long(kind, reported_s, tail_s):
        raise AuditFailed(f"audit: the device was still busy {tail_s * 1e3:.3g} ms after the timed region's end event "
                          f"({reported_s * 1e3:.3g} ms): work went on outside the timed stream ({FINISHES_LATER})",
                          FINISHES_LATER)


#: cudaLimitPersistingL2CacheSize in the CUDA runtime's cudaLimit enum.
_CUDA_LIMIT_PERSISTING_L2 = 0x06


def _loaded_cudart() -> Any:
    """The CUDA runtime library this process has loaded (each runtime brings its own), or None."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libcudart" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def reset_persisting_l2(backend: Any, cudart: Callable[[], Any] = _loaded_cudart) -> bool:
    """Before a CUDA cell: every persisting L2 line back to normal and the set-aside back to 0, so a variant
    that pinned its data in L2 (an access-policy window) cannot carry it into its own or another cell's
    timing (llm.c #851 read 4x the HBM peak that way). Returns whether a reset was made."""
    if getattr(backend, "device_class", "cpu") != "cuda":
        return False
    lib = cudart()
    if lib is None:
        return False
    lib.cudaDeviceSetLimit(_CUDA_LIMIT_PERSISTING_L2, 0)
    lib.cudaCtxResetPersistingL2Cache()
    return True


#: What the harness measures and checks with: a kernel that replaces one of these is tampering. So is one that
#: replaces a runtime's timer (:func:`guarded_functions`).
GUARDED = (
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("time", "monotonic"),
    ("workbench.backends.base", "SyncWallTimer.measure"), ("workbench.backends.base", "EventTimer.measure"),
    ("workbench.measure.timer", "time_calls"), ("workbench.measure.timer", "relative_spread"),
    ("workbench.judge.stats", "summarize"), ("workbench.judge.stats", "relative_spread"),
    ("workbench.measure.case", "check"), ("workbench.measure.case", "reference_outputs"),
    ("workbench.measure.case", "Case.run_and_check"),
    ("workbench.measure.case", "Case.fetch"), ("workbench.measure.audit", "Auditor.check"),
    ("workbench.measure.audit", "Auditor.arm"), ("workbench.measure.audit", "check_timer"),
)


def _timers(cls: type[Timer]) -> Iterator[type[Timer]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _timers(sub)


def guarded_functions() -> list[tuple[str, str]]:
    """:data:`GUARDED`, and the ``measure`` of every timer the backend adapters loaded so far define (each
    runtime's own timer, whichever runtimes there are)."""
    timers = [(t.__module__, f"{t.__qualname__}.measure") for t in _timers(Timer)
              if t.__module__.startswith("workbench.backends.") and "measure" in t.__dict__]
    return list(dict.fromkeys([*GUARDED, *timers]))


class HarnessGuard:
    """The identities of :func:`guarded_functions` when first seen; :meth:`tampered` lists (and puts back) any
    replaced."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], Any] = {}

    def _owner(self, module: str, path: str) -> tuple[Any, str] | None:
        obj = sys.modules.get(module)
        if obj is None:
            return None
        *parents, name = path.split(".")
        for p in parents:
            obj = getattr(obj, p, None)
        return (obj, name) if obj is not None else None

    def snapshot(self) -> None:
        for module, path in guarded_functions():
            where = self._owner(module, path)
            if where is None or (module, path) in self._seen:
                continue
            found = where[0].__dict__.get(where[1], getattr(where[0], where[1], None))
            if found is not None:  # a module still importing has not defined it yet: a later snapshot sees it
                self._seen[(module, path)] = found

    def tampered(self) -> list[str]:
        """``module.attribute`` of every guarded function replaced since :meth:`snapshot`; each is put back."""
        found = []
        for (module, path), original in self._seen.items():
            where = self._owner(module, path)
            if where is None:
                continue
            owner, name = where
            now = owner.__dict__.get(name, getattr(owner, name, None))
            if now is not original:
                found.append(f"{module}.{path}")
                setattr(owner, name, original)
        return found

    def check(self) -> None:
        """Raise :class:`AuditFailed` when a guarded function was replaced (after putting it back)."""
        found = self.tampered()
        self.snapshot()
        if found:
            raise AuditFailed(f"audit: the variant replaced {', '.join(found)} ({TAMPERS}); the originals are back",
                              TAMPERS)


#: One guard per process, first seen when :mod:`workbench.measure.audit` is imported (before any kernel is built).
GUARD = HarnessGuard()

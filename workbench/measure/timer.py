"""The adaptive timing loop shared by every backend.

Modelled on triton's ``do_bench`` and ``torch.utils.benchmark``'s
``blocked_autorange``: warm up by time, batch calls that are too short to time
one by one, then take samples until the relative spread (IQR / median) is
below a target or the budget is spent. Timing itself goes through
``backend.timer()`` so device events are used where the runtime has them.

Every loop is audited (:mod:`workbench.measure.audit`): random samples are checked against the reference of
inputs changed just before them, so a kernel cannot tell a timed call from a checked one; the harness's own
clock watches the timer, and a replaced timer, statistic or check function fails the cell.
"""

from __future__ import annotations

import math
import random
import secrets
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from workbench.backends.base import Backend, Timer
from workbench.catalog.spec import Arrays
from workbench.core.record import TIMING_MODES
from workbench.judge.stats import median_precision, relative_spread
from workbench.measure.audit import (
    DEVICE_EVENT_TIMERS,
    GUARD,
    TAIL_SHARE_TO_FAIL,
    TAILS_TO_FAIL,
    Auditor,
    NoAudit,
    check_device_tail,
    check_timer,
    tail_is_long,
)
from workbench.measure.case import Case
from workbench.measure.gpu_budget import GpuBudget
from workbench.measure.input_set import InputSet, SharedVersion

try:
    import resource
    _RUSAGE_THREAD = hasattr(resource, "RUSAGE_THREAD")
except ImportError:  # not a Unix
    _RUSAGE_THREAD = False

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
    #: Sample until the median is known to ± this (95%, relative; :func:`~workbench.judge.stats.median_precision`)
    #: instead of stopping at ``target_spread``; 0: stop at ``target_spread`` (samples spread little).
    precision: float = 0.0
    #: Seconds beyond ``budget_s`` a loop may go on to reach ``precision`` (a large cell gets the calls its
    #: median needs); the row says the precision it reached either way.
    extend_s: float = 0.0
    #: A GPU cell's timing mode (``kernel``, ``graph``, ``launch``, ``host``); None: the backend's default
    #: (:mod:`workbench.measure.timing_modes`). A CPU cell is always ``host``.
    timing_mode: str | None = None
    #: A GPU visit's own budget (:mod:`workbench.measure.gpu_visit`); CPU cells never read it.
    gpu: GpuBudget = field(default_factory=GpuBudget)

    def __post_init__(self) -> None:
        if self.timing_mode is not None and self.timing_mode not in TIMING_MODES:
            raise ValueError(f"unknown timing mode {self.timing_mode!r}; valid timing modes: "
                             f"{', '.join(TIMING_MODES)}")
        if self.cache not in CACHE_MODES:
            raise ValueError(f"unknown cache mode {self.cache!r}; valid cache modes: {', '.join(CACHE_MODES)}")
        if self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError(f"need 1 <= min_samples <= max_samples, got {self.min_samples}, {self.max_samples}")
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be at least 1, got {self.n_inputs}")
        if not (0 <= self.precision < 1) or not (0 <= self.extend_s < math.inf):
            raise ValueError(f"precision must be in [0, 1) and extend_s finite and >= 0, got {self.precision}, "
                             f"{self.extend_s}")

    def precise(self, samples: list[float]) -> bool:
        """The loop may stop on its samples: the median known to :attr:`precision`, or (without one) the
        samples within :attr:`target_spread`."""
        if self.precision > 0:
            return median_precision(samples) <= self.precision
        return relative_spread(samples) <= self.target_spread


@dataclass
class Timing:
    """Raw per-call samples and how the loop got them."""

    samples_s: list[float] = field(default_factory=list)  # device time per call
    host_samples_s: list[float] = field(default_factory=list)  # host (launch) time per call
    calls_per_sample: int = 1
    warmup_calls: int = 0
    #: "precision", "spread", "budget", "max_samples" or "deadline"
    stopped_by: str = ""
    #: The precision the loop's median reached (:func:`~workbench.judge.stats.median_precision`).
    precision: float = math.inf
    #: Audited timed calls, input changes between samples, and the seconds both took (outside timed regions).
    audits: int = 0
    input_changes: int = 0
    audit_s: float = 0.0
    #: What the first failed audit found (its message names the class), or "".
    audit_failure: str = ""
    #: With a partner (:class:`Partner`): log(partner's block time / this one's), one per block pair, and
    #: what its first failed audit found (the pairs are then not to be used).
    pair_log_ratios: list[float] = field(default_factory=list)
    partner_failure: str = ""
    #: Samples the loop's ``gate`` dropped and took again (a GPU's clock below its mark, or throttled).
    discarded: int = 0


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


@dataclass
class Partner:
    """The cell's default baseline, timed in the same loop in alternating blocks (:func:`time_calls`): its
    calls (one per input set, in rotation, on the same inputs) and their own audit."""

    calls: Sequence[Callable[[], Any]]
    audit: Auditor | NoAudit


def time_calls(timer: Timer, calls: Sequence[Callable[[], Any]], config: TimingConfig, *,
               audit: Auditor | NoAudit, flush: Callable[[], None] | None = None, deadline: float = math.inf,
               cancel: threading.Event | None = None, sync: Callable[[], None] | None = None,
               partner: Partner | None = None, gate: Callable[[], bool] | None = None) -> Timing:
    """Time ``calls`` (one per input set, used in rotation) adaptively, under ``audit``.

    ``flush`` runs before every sample when ``config.cache == "cold"``, outside
    the timed region. Cold samples are single calls: the second call of a batch
    would find the cache warm again. ``deadline`` (a ``time.perf_counter``
    value) ends the loop early even below ``min_samples``; the caller decides
    what that means. ``audit`` (required: no loop times a variant unaudited) may change inputs before a
    sample and check its output after; a wrong output, a timer that disagrees with the harness's clock or a
    replaced harness function raises :class:`~workbench.measure.audit.AuditFailed`, and so does, with event
    timers, a device still busy after a sample's end event (``sync``: the whole device's synchronisation,
    which ends every such sample); a wrong audited output
    is reported in ``Timing.audit_failure`` (the loop's timings are kept, for the caller to flag).

    ``partner``: a second function timed in the same loop, in blocks alternating with this one's (a block
    pair in a random order), so drift common to both cancels in each pair's ratio
    (``Timing.pair_log_ratios``: log(partner's block time / this one's), one per pair); the budget is
    shared by both, and its audit checks its samples as ``audit`` checks this one's.

    ``gate``: asked after every sample; True drops it and takes it again (:class:`~workbench.measure.gpu_visit.
    ClockGate`: a GPU sample below 90% of the maximum SM clock, nvbench's rule); ``Timing.discarded`` counts them.
    """
    if not calls:
        raise ValueError("time_calls needs at least one call")
    GUARD.check()
    audits = [audit] if partner is None else [audit, partner.audit]
    try:
        side = _Side(timer, calls, config, audit, flush, sync, paired=partner is not None)
        side.gate = gate
        if partner is None:
            out = _loop(side, config, deadline, cancel)
        else:
            other = _Side(timer, partner.calls, config, partner.audit, flush, sync, paired=True, partner=True)
            other.gate = gate
            out = _paired_loop(side, other, config, deadline, cancel)
    finally:
        for a in audits:
            a.restore()
    GUARD.check()
    out.audits, out.input_changes = sum(a.audits for a in audits), sum(a.changes for a in audits)
    out.audit_s = sum(a.seconds for a in audits)
    out.discarded = side.discarded + (other.discarded if partner is not None else 0)
    out.audit_failure = str(audit.failure) if audit.failure is not None else ""
    if partner is not None and partner.audit.failure is not None:
        out.partner_failure = str(partner.audit.failure)
    return out


class _Watch:
    """The timer's reported totals beside the harness's own clock around the same samples."""

    def __init__(self, timer: Timer, sync: Callable[[], None] | None, watch: bool) -> None:
        self.timer, self.kind = timer, timer.kind
        self.samples: list[tuple[float, float]] = []
        #: Event timers stop at an event on their stream: the whole device is synchronised after each sample.
        self.sync = sync if watch and timer.kind in DEVICE_EVENT_TIMERS else None
        #: Long tails seen after samples whose synchronisation held the core throughout (see :meth:`measure`).
        self.tails: list[tuple[float, float]] = []

    def measure(self, fn: Callable[[], Any]) -> Any:
        t0 = _clock()
        s = self.timer.measure(fn)
        self.samples.append((s.device_s, _clock() - t0))
        if self.sync is not None:
            switched = _preemptions()
            t1 = _clock()
            self.sync()
            tail = _clock() - t1
            # A tail is evidence only where the thread kept its core through the synchronisation: a time slice
            # lost to another process (or to a sibling worker) stretches the host's clock, not the device's
            # work. One tail is not enough either (a page fault, the allocator): work that goes on outside the
            # timed stream does so at every call, so a second long tail, in a quarter of the samples, fails.
            if tail_is_long(self.kind, s.device_s, tail) and _preemptions() == switched:
                self.tails.append((s.device_s, tail))
                if len(self.tails) >= TAILS_TO_FAIL and len(self.tails) >= TAIL_SHARE_TO_FAIL * len(self.samples):
                    check_device_tail(self.kind, *self.tails[-1])
        return s

    def check(self) -> None:
        check_timer(self.kind, self.samples)


class _Side:
    """One timed function of a loop: its calls in rotation (batched once warm), its audit and watch, and the
    samples taken so far (:attr:`out`)."""

    def __init__(self, timer: Timer, calls: Sequence[Callable[[], Any]], config: TimingConfig,
                 audit: Auditor | NoAudit, flush: Callable[[], None] | None, sync: Callable[[], None] | None,
                 paired: bool = False, partner: bool = False) -> None:
        self.calls, self.config, self.audit = calls, config, audit
        #: A side of a paired loop: its samples are told apart by whether they were stretched (the two
        #: system calls per sample a lone loop has no use for).
        self.paired = paired
        #: The partner of a paired loop: its faults are its own (:class:`PartnerFailed`), not the cell's.
        self.partner = partner
        self.cold = config.cache == "cold"
        self.flush = flush if self.cold else None
        self.watch = _Watch(timer, sync, audit.watch_timer)
        self.out = Timing()
        self.batches: list[Callable[[], None]] = []
        self.k = 1
        self.taken = 0
        #: The last sample was taken off the core at least once (another process ran): its time is stretched.
        self.stretched = False
        #: Asked after each sample: True drops it and it is taken again (``time_calls``' ``gate``).
        self.gate: Callable[[], bool] | None = None
        self.discarded = 0

    def warm_up(self, seconds: float, deadline: float, cancel: threading.Event | None) -> None:
        """Warm up by time, at least one call: absorbs lazy initialisation and caches of the runtime, and tells
        how long one call takes, hence how many calls make one sample."""
        warm: list[float] = []
        m = len(self.calls)
        start = _clock()
        while True:
            _check(cancel)
            if self.flush is not None:
                self.flush()
            i = len(warm) % m
            fn = self.audit.arm(i, 1, False, self.calls) or self.calls[i]
            warm.append(self.watch.measure(fn).device_s)
            self.audit.check()
            now = _clock()
            if now - start >= seconds or now >= deadline:
                break
        self.out.warmup_calls += len(warm)
        recent = sorted(warm[-5:])
        per_call = max(recent[len(recent) // 2], 1e-9)
        cfg = self.config
        self.k = 1 if self.cold else int(min(cfg.max_calls_per_sample, max(1, math.ceil(cfg.min_sample_s / per_call))))
        self.out.calls_per_sample = self.k
        self.batches = _batches(self.calls, self.k)

    def sample(self, cancel: threading.Event | None) -> float:
        """One sample (``k`` calls, audited when the audit picks it); returns its time per call."""
        _check(cancel)
        if self.flush is not None:
            self.flush()
        r = self.taken % len(self.batches)
        fn = self.audit.arm(r, self.k, True, self.calls) or self.batches[r]
        switches = _preemptions() if self.paired else 0
        s = self.watch.measure(fn)
        while self.gate is not None and fn is self.batches[r] and self.gate():  # an audited sample is kept
            self.discarded += 1
            _check(cancel)
            if self.flush is not None:
                self.flush()
            switches = _preemptions() if self.paired else 0
            s = self.watch.measure(fn)
        self.stretched = self.paired and _preemptions() > switches
        self.audit.check()
        self.taken += 1
        self.out.samples_s.append(s.device_s / self.k)
        self.out.host_samples_s.append(s.host_s / self.k)
        return s.device_s / self.k

    def finish(self) -> Timing:
        """The loop's certain audit, when its chosen sample never came (one more call), and the timer's totals
        held against the harness's clock; the precision its median reached."""
        self.out.precision = median_precision(self.out.samples_s)
        last = self.audit.pending(self.calls)
        if last is not None:
            self.watch.measure(last)
            self.audit.check()
        if self.audit.watch_timer:
            self.watch.check()
        return self.out


def _loop(side: _Side, config: TimingConfig, deadline: float, cancel: threading.Event | None) -> Timing:
    side.warm_up(config.warmup_s, deadline, cancel)
    out = side.out
    # past the budget, a loop short of its precision goes on for up to extend_s (it has not stopped on it)
    end = min(_clock() + config.budget_s + (config.extend_s if config.precision > 0 else 0.0), deadline)
    while True:
        side.sample(cancel)
        n = len(out.samples_s)
        if n >= config.max_samples:
            out.stopped_by = "max_samples"
            break
        if n >= config.min_samples and config.precise(out.samples_s):
            out.stopped_by = "precision" if config.precision > 0 else "spread"
            break
        now = _clock()
        if now >= end and n >= config.min_samples:
            out.stopped_by = "budget"
            break
        if now >= deadline:
            out.stopped_by = "deadline"
            break
    return side.finish()


#: Blocks of a paired loop: samples per block (at most), and the time a block aims at. A block counts its
#: fastest sample: another process taking the core only ever adds time, and on a busy 2-core machine half of
#: 1 ms samples were stretched that way (a block's median then swung a visit's ratio 2-7x); the first sample
#: of a block finding caches left by the other side is passed over too. Blocks stay short so that drift
#: between the two halves of a pair stays small.
BLOCK_SAMPLES = 3
BLOCK_S = 0.01
#: Block pairs a paired loop takes at least (the within-visit ratio is their median), and before it may stop
#: on a small spread.
MIN_PAIRS = 3
SPREAD_PAIRS = 8


def _paired_loop(a: _Side, b: _Side, config: TimingConfig, deadline: float,
                 cancel: threading.Event | None) -> Timing:
    """``a`` and ``b`` in alternating blocks, each pair's order drawn at random, until the budget (for both)
    is spent with ``a``'s ``min_samples`` and :data:`MIN_PAIRS` clean pairs taken (both blocks had a sample
    wholly on the core; on a busy machine the loop goes on for up to twice the budget to find them), or
    ``a``'s spread and the clean pairs' spread are at the target after :data:`SPREAD_PAIRS` of them.
    Returns ``a``'s timing, with the clean pairs' ratios; none when fewer than MIN_PAIRS were clean (a visit
    resting on one or two pairs swung by ±20% at 1 ms calls on a busy machine, and pairs of stretched blocks
    exaggerate a gap: the longer side is stretched more often): that visit then gives no paired effect."""
    rng = random.Random(secrets.randbits(64))
    _warm_pair(a, b, config, deadline, cancel, rng)
    out = a.out
    start = _clock()
    end, last = min(start + config.budget_s, deadline), min(start + 2 * config.budget_s, deadline)
    ratios: list[float] = []
    clean: list[float] = []
    while True:
        if rng.random() < 0.5:  # this pair's order
            ta, a_clean = _block(a, cancel)
            tb, b_clean = _block(b, cancel)
        else:
            tb, b_clean = _block(b, cancel)
            ta, a_clean = _block(a, cancel)
        if ta > 0 and tb > 0:
            ratios.append(math.log(tb / ta))
            if a_clean and b_clean:
                clean.append(ratios[-1])
        n, pairs = len(out.samples_s), len(clean)
        if n >= config.max_samples:
            out.stopped_by = "max_samples"
            break
        if (pairs >= SPREAD_PAIRS and n >= config.min_samples and config.precise(out.samples_s)
                and _log_spread(clean) <= config.target_spread):
            out.stopped_by = "precision" if config.precision > 0 else "spread"
            break
        now = _clock()
        # past the budget, more calls while the median is short of its precision, for up to extend_s
        stop_at = end if config.precision <= 0 or config.precise(out.samples_s) else min(end + config.extend_s,
                                                                                             deadline)
        if now >= stop_at and n >= config.min_samples and len(ratios) >= MIN_PAIRS and (pairs >= MIN_PAIRS
                                                                                         or now >= last):
            out.stopped_by = "budget"
            break
        if now >= deadline:
            out.stopped_by = "deadline"
            break
    out.pair_log_ratios = clean if len(clean) >= MIN_PAIRS else []
    try:
        b.finish()
    except Cancelled:
        raise
    except Exception as exc:
        raise PartnerFailed(exc) from exc
    return a.finish()


def _warm_pair(a: _Side, b: _Side, config: TimingConfig, deadline: float, cancel: threading.Event | None,
               rng: random.Random) -> None:
    """Both sides warmed up, in a random order; the partner's failure is its own (:class:`PartnerFailed`)."""
    for side in (a, b) if rng.random() < 0.5 else (b, a):
        if side is a:
            a.warm_up(config.warmup_s, deadline, cancel)
            continue
        try:
            b.warm_up(config.warmup_s, deadline, cancel)
        except Cancelled:
            raise
        except Exception as exc:
            raise PartnerFailed(exc) from exc


class PartnerFailed(Exception):
    """The partner (the baseline timed beside a cell) raised: the caller times the cell alone instead, so a
    baseline's fault is never blamed on the cell."""


def _partner_sample(b: _Side, cancel: threading.Event | None) -> float:
    try:
        return b.sample(cancel)
    except Cancelled:
        raise
    except Exception as exc:
        raise PartnerFailed(exc) from exc


def _block(side: _Side, cancel: threading.Event | None) -> tuple[float, bool]:
    """One block of ``side``: up to :data:`BLOCK_SAMPLES` samples within about :data:`BLOCK_S`; returns its
    fastest sample taken wholly on the core (else its fastest sample) and whether it had such a sample."""
    take = side.sample if not side.partner else partial(_partner_sample, side)
    times, kept = [take(cancel)], []
    per_sample = times[0] * side.k
    if not side.stretched:
        kept.append(times[0])
    while len(times) < BLOCK_SAMPLES and per_sample * (len(times) + 1) <= BLOCK_S:
        times.append(take(cancel))
        if not side.stretched:
            kept.append(times[-1])
    return (min(kept), True) if kept else (min(times), False)


def _preemptions() -> int:
    """Involuntary context switches of the timing thread so far: one between a sample's start and end means
    another process had the core meanwhile (its wall time is stretched by a time slice, 4-20 ms on a busy
    machine, however short the kernel). 0 where the OS does not count them per thread."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw if _RUSAGE_THREAD else 0


def _log_spread(x: Sequence[float]) -> float:
    """The interquartile range of log ratios: the relative spread of the pairs' ratios."""
    q = statistics.quantiles(x, n=4) if len(x) >= 2 else [0.0, 0.0, 0.0]
    return q[2] - q[0]


#: The loop ``verify`` runs after its checks: calls that look like timed ones (the same output buffer, holding
#: the previous answer; inputs in rotation), every sample audited (a check costs nothing here). Its samples
#: are not kept.
EXERCISE = TimingConfig(warmup_s=0.0, min_samples=4, max_samples=4, budget_s=0.0, min_sample_s=0.0)


def exercise(timer: Timer, case: Case, sets: Sequence[InputSet], *, deadline: float = math.inf,
             cancel: threading.Event | None = None, reference_of: Callable[[int], Arrays | None] | None = None,
             shared_version: SharedVersion | None = None) -> Timing:
    """:data:`EXERCISE` on ``case`` over ``sets`` (device inputs, host inputs) under an
    :class:`~workbench.measure.audit.Auditor`: a check-only run still sees calls it cannot tell from timed ones.
    ``reference_of``, ``shared_version``: each set's float64 reference and audit version where the caller has
    them (see the Auditor)."""
    out = case.outputs
    calls = [(lambda inp=inp: case.call(inp, out)) for inp, _ in sets]
    audit = Auditor(case, sets, out, min_samples=EXERCISE.min_samples, probability=1.0, cost_share=math.inf,
                    reference_of=reference_of, shared_version=shared_version)
    timing = time_calls(timer, calls, EXERCISE, audit=audit, deadline=deadline, cancel=cancel,
                        sync=case.backend.synchronize)
    if audit.failure is not None:
        raise audit.failure
    return timing


GUARD.snapshot()  # time_calls and this module's helpers, now that they exist

"""Audits: a kernel cannot tell a timed call from a checked one, so it cannot skip its work when timed.

Why: a correctness check that poisons outputs with NaN and runs once is easy to see; a variant that computes
only when it sees the poison, memoizes by a cheap fingerprint of its input, finishes its work after the call
returns, patches the harness, or computes in a lower precision was timed as "faster" than any honest one
(issue 23). Each class of gaming is named in the message of the cell that shows it (:data:`CLASSES`).

- :class:`Auditor` picks timed samples at random (from a generator the cell's seed does not predict): before
  one, a random few positions of the input set its last call reads change value (copied from other positions
  of the same input, so values stay in range), the output still holds the previous call's answer (no poison
  to recognise), and the call's output is copied the moment it returns; the reference of the changed inputs
  is computed only then, after the call (no reference exists for a kernel to find beforehand). Inputs also
  change at random between samples that are not audited, so a change does not announce an audit. The changed
  positions are put back after the loop.
- :func:`check_timer` compares what the timer reported with the harness's own clock;
  :class:`HarnessGuard` notices a replaced timer, statistic or check function (and puts the original back).
- :func:`judge_reported` is the parent's side: statistics recomputed from the samples, and the samples' total
  within the parent's own clock of the cell.
- :func:`explain_failure` names the class of a failed check where the evidence says which (the output
  complete only later; an error of the size lower-precision arithmetic gives).
- :func:`implausible_reason` is the impossible-speed test (the device's top roof, or a simple DRAM-multiple
  check where no top roof is measured).
"""

from __future__ import annotations

import importlib
import math
import secrets
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..case import Case, CheckResult, normalize_outputs
from ..case import check as _check_outputs  # bound here: replacing workbench.case.check later does not reach audits
from ..case import reference_outputs as _reference_outputs
from ..status import Status

Call = Callable[[], Any]

#: The harness's own clock, bound at import (a kernel replacing ``time.perf_counter`` later does not reach it).
_clock = time.perf_counter

#: The classes of gaming, as messages name them.
WORKS_ONLY_WHEN_CHECKED = "works only when checked"
MEMOIZES = "memoizes by fingerprint"
FINISHES_LATER = "finishes later"
TAMPERS = "tampers with the harness"
TRADES_PRECISION = "trades precision for speed"
IMPOSSIBLE_SPEED = "impossible speed"
CLASSES = (WORKS_ONLY_WHEN_CHECKED, MEMOIZES, FINISHES_LATER, TAMPERS, TRADES_PRECISION, IMPOSSIBLE_SPEED)
#: A stale answer has three explanations the output alone cannot tell apart.
STALE = f"{MEMOIZES} or replays a captured graph, or it copies a reference it found: {TAMPERS}"

#: Chance that a sample past the first audited one is audited, and (separately) that its inputs change.
AUDIT_PROBABILITY = 0.1
#: Optional audits and input changes stop while they have taken more than this share of the loop's time
#: (the first audit always runs): the cost target is <= 5% of a sweep (tests/perf/audit_cost.py).
AUDIT_COST_SHARE = 0.02
#: Positions changed in each input before a sample: this share of its elements, within the bounds below.
CHANGE_SHARE = 1 / 256
MIN_CHANGES, MAX_CHANGES = 4, 256
#: Earlier values of an input set a failed audit compares the wrong output with (a stale answer is named so).
DIAGNOSE_STATES = 16
#: How long a failed audit waits before reading the output again (a thread or side stream still writing it).
LATE_WAIT_S = 0.05
#: How many times (each after :data:`LATE_WAIT_S`) it looks before concluding the output is not changing.
LATE_POLLS = 6


class AuditFailed(Exception):
    """A timed call's output was wrong, or the harness was tampered with; the message names the class."""

    def __init__(self, message: str, kind: str, check: CheckResult | None = None):
        super().__init__(message)
        self.kind, self.check = kind, check


class NoAudit:
    """No audit, for a callable that is not a catalog variant (``workbench.timeit``): there is no reference to
    audit against. The reason says so where the timing is used."""

    audits = changes = 0
    seconds = 0.0
    failure: AuditFailed | None = None
    #: Nothing is held against the timer either (a scripted timer in the loop's own tests reports what it likes).
    watch_timer = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def arm(self, offset: int, k: int, sampling: bool, calls: Sequence[Call]) -> Call | None:
        return None

    def check(self) -> None:
        return None

    def restore(self) -> None:
        return None


@dataclass
class _Changes:
    """The changes made to one input of one set: (positions, values before) in order, to undo in reverse."""

    undo: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    #: The device object before it was replaced (backends whose arrays cannot be written in place).
    replaced: Any = None


class Auditor:
    """The audits of one timing loop over ``sets`` (device inputs, host inputs), all writing to ``out``.

    ``references(i)`` gives set ``i``'s float64 reference before any change (a sweep's shared cache);
    ``min_samples``: one of the loop's first samples is always audited, chosen at random (postponed until its
    input set has been called once: a memoizer computes a set it has never seen). ``probability``: of
    auditing each further sample, while audits and input changes take at most ``cost_share`` of the loop.
    """

    def __init__(self, case: Case, sets: Sequence[tuple[dict[str, Any], dict[str, np.ndarray]]],
                 out: dict[str, Any], *, references: Callable[[int], dict[str, np.ndarray]] | None = None,
                 min_samples: int = 1, probability: float = AUDIT_PROBABILITY, cost_share: float = AUDIT_COST_SHARE,
                 rng: np.random.Generator | None = None) -> None:
        self.case, self.sets, self.out = case, list(sets), out
        self._original_refs = references or (lambda i: _reference_outputs(case.spec, self.sets[i][1], case.params))
        self.rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
        self._first = int(self.rng.integers(max(1, min_samples)))
        self._sampled = 0
        self._first_done = False
        self._seen: set[int] = set()
        self.probability, self.cost_share = probability, cost_share
        self._hosts: dict[int, dict[str, np.ndarray]] = {}  # current values of changed sets
        self._changes: dict[tuple[int, str], _Changes] = {}
        self._refs: dict[int, dict[str, np.ndarray]] = {}  # references of the current values, once computed
        self._armed: int | None = None
        self._before: dict[str, np.ndarray] | None = None
        self._result: Any = None
        self._snap: dict[str, Any] | None = None
        self._t0: float | None = None
        #: The timer's totals are held against the harness's clock (:func:`check_timer`).
        self.watch_timer = True
        #: Audited timed calls, input changes made, and the seconds both took (outside the timed regions).
        self.audits = self.changes = 0
        self.seconds = 0.0
        #: The first audited call whose output was wrong (the loop goes on: its timings are kept, flagged).
        self.failure: AuditFailed | None = None

    # -- before a sample ---------------------------------------------------------------------------------------
    def arm(self, offset: int, k: int, sampling: bool, calls: Sequence[Call]) -> Call | None:
        """Called before a sample of ``k`` calls from ``calls`` in rotation, starting at ``offset``; may change
        the values of the last call's input set; returns the sample's function when it is audited (the same
        calls, the last one's output copied at return), else None. ``sampling``: past the warm-up."""
        t = _clock()
        if self._t0 is None:
            self._t0 = t
        m = len(calls)
        last = (offset + k - 1) % m
        must = sampling and not self._first_done and self._sampled >= self._first and last in self._seen
        self._first_done |= must
        self._sampled += bool(sampling)
        self._seen.update((offset + i) % m for i in range(min(k, m)))
        spare = self.seconds <= self.cost_share * (t - self._t0)
        audit = must or (spare and self.rng.random() < self.probability)
        if audit or (spare and self.rng.random() < self.probability):
            self._change(last)
        fn = None
        if audit:
            self._armed = last
            self._refill()
            self._before = self._host(self.out)
            fn = self._batch([calls[(offset + i) % m] for i in range(k - 1)], last)
        self.seconds += _clock() - t
        return fn

    def _batch(self, before: list[Call], last: int) -> Call:
        inputs, out, call = self.sets[last][0], self.out, self.case.call

        def audited() -> None:
            for f in before:
                f()
            result = normalize_outputs(call(inputs, out), out)
            self._snap = {k: _snapshot(v) for k, v in result.items()}  # read at return, before anything else
            self._result = result
        return audited

    def _refill(self) -> None:
        """Move a few values of the previous answer in the output buffers to other positions: still a plausible
        answer (no poison to see), but not bit for bit one a kernel could have written for any input."""
        for name, dev in self.out.items():
            values = self._host({name: dev})[name]
            if values.size < 2:
                continue
            flat = values.reshape(-1)
            m = int(min(MAX_CHANGES, max(MIN_CHANGES, flat.size * CHANGE_SHARE)))
            pos, src = self.rng.integers(flat.size, size=m), self.rng.integers(flat.size, size=m)
            flat[pos] = flat[src]
            self._write(self.out, name, values, pos, _Changes(), replace=False)

    def _change(self, s: int) -> None:
        """Copy values from random positions of each input of set ``s`` to other random positions (a cheap
        fingerprint of a few fixed elements stays the same; the answer does not)."""
        device, original = self.sets[s]
        host = self._hosts.get(s)
        if host is None:
            host = self._hosts[s] = {k: np.array(v, copy=True) for k, v in original.items()}
        for name, values in host.items():
            if values.size < 2 or name not in device:
                continue
            flat = values.reshape(-1)
            m = int(min(MAX_CHANGES, max(MIN_CHANGES, flat.size * CHANGE_SHARE)))
            pos, src = self.rng.integers(flat.size, size=m), self.rng.integers(flat.size, size=m)
            rec = self._changes.setdefault((s, name), _Changes())
            rec.undo.append((pos, flat[pos].copy()))
            flat[pos] = flat[src]
            self._write(device, name, values, pos, rec)
        self._refs.pop(s, None)
        self.changes += 1

    def _write(self, device: dict[str, Any], name: str, values: np.ndarray, pos: np.ndarray, rec: _Changes,
               replace: bool = True) -> None:
        """The changed positions into the device array, in place where the runtime allows (the kernel sees
        the same object), else (with ``replace``) as a new device array in the same dict."""
        dev, flat = device[name], values.reshape(-1)
        if isinstance(dev, np.ndarray) and dev.flags.c_contiguous and dev.flags.writeable and dev.size == flat.size:
            dev.reshape(-1)[pos] = flat[pos].astype(dev.dtype, copy=False)
            return
        module = type(dev).__module__.split(".")[0]
        if module == "torch" and dev.is_contiguous():
            torch = sys.modules["torch"]
            idx = torch.as_tensor(pos, device=dev.device)
            dev.view(-1)[idx] = torch.as_tensor(flat[pos]).to(device=dev.device, dtype=dev.dtype)
            return
        if module == "cupy" and dev.flags.c_contiguous:
            cp = sys.modules["cupy"]
            dev.reshape(-1)[cp.asarray(pos)] = cp.asarray(flat[pos]).astype(dev.dtype)
            return
        if not replace:
            return
        if rec.replaced is None:
            rec.replaced = dev
        device[name] = self.case.backend.to_device(values, self.case.dtype)

    # -- after a sample ----------------------------------------------------------------------------------------
    def check(self) -> None:
        """After an audited sample: its last call's output, read at return, against the reference of the
        inputs it was given (computed now); the first wrong answer is kept in :attr:`failure`, naming the class."""
        if self._armed is None:
            return
        t = _clock()
        s, self._armed = self._armed, None
        snap, self._snap = self._snap, None
        try:
            got = self._host(snap if snap is not None else self._result)
            host = self._current(s)
            ref = self._reference(s)
            res = _check_outputs(self.case.spec, got, ref, self.case.dtype, host, self.case.params)
            self.audits += 1
            if not res.passed and self.failure is None:
                what, kind = self._diagnose(s, got, ref)
                self.failure = AuditFailed(f"audit: {what} on an audited timed call (rotated input set {s}, values "
                                           f"changed just before): {res.message or 'wrong output'} ({kind})", kind, res)
        finally:
            self._result = self._before = None
            self.seconds += _clock() - t

    def _current(self, s: int) -> dict[str, np.ndarray]:
        return self._hosts.get(s, self.sets[s][1])

    def _reference(self, s: int) -> dict[str, np.ndarray]:
        if s not in self._refs:
            self._refs[s] = (_reference_outputs(self.case.spec, self._hosts[s], self.case.params) if s in self._hosts
                             else self._original_refs(s))
        return self._refs[s]

    def _passes(self, got: dict[str, np.ndarray], ref: dict[str, np.ndarray], host: dict[str, np.ndarray]) -> bool:
        return _check_outputs(self.case.spec, got, ref, self.case.dtype, host, self.case.params).passed

    def _diagnose(self, s: int, got: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> tuple[str, str]:
        """What the wrong output looks like, and the class that explains it."""
        for waited in range(1, LATE_POLLS + 1):
            time.sleep(LATE_WAIT_S)
            later = self._host(self._result) if self._result is not None else None
            if later is not None and not all(k in later and _same_bits(v, later[k]) for k, v in got.items()):
                right = " (and right then)" if self._passes(later, ref, self._current(s)) else ""
                return (f"the output was still being written {waited * LATE_WAIT_S * 1e3:.0f} ms after the call "
                        f"returned{right}", FINISHES_LATER)
        if self._before is not None and all(k in self._before and _same_bits(v, self._before[k])
                                            for k, v in got.items()):
            return "the output was left holding the previous call's answer", WORKS_ONLY_WHEN_CHECKED
        for j in [s, *(j for j in range(len(self.sets)) if j != s)]:
            for when, host in self._earlier_states(j, skip_current=j == s):
                ref_j = self._original_refs(j) if when == "before they changed" else _reference_outputs(
                    self.case.spec, host, self.case.params)
                if self._passes(got, ref_j, host):
                    whose = "the input's" if j == s else f"input set {j}'s"
                    return (f"a stale answer, for {whose} values {when}",
                            STALE)
        return "a wrong answer where checked calls were right", WORKS_ONLY_WHEN_CHECKED

    def _earlier_states(self, j: int, skip_current: bool) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
        """The values set ``j`` held, newest first: now (unless ``skip_current``), after each of its last
        :data:`DIAGNOSE_STATES` changes, and before any change."""
        current = self._hosts.get(j)
        if current is None:
            yield "before they changed", self.sets[j][1]
            return
        if not skip_current:
            yield "as they are now", current
        state = {k: v.copy() for k, v in current.items()}
        steps = max((len(rec.undo) for (i, _), rec in self._changes.items() if i == j), default=0)
        for n, step in enumerate(range(steps - 1, -1, -1)):
            for (i, name), rec in self._changes.items():
                if i == j and step < len(rec.undo):
                    pos, old = rec.undo[step]
                    state[name].reshape(-1)[pos] = old
            if n < DIAGNOSE_STATES and step:
                yield "from an earlier change", state
        yield "before they changed", self.sets[j][1]

    def _host(self, outputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        self.case.backend.synchronize()
        return {k: np.array(self.case.backend.to_numpy(v), copy=True) for k, v in outputs.items()}

    # -- after the loop ----------------------------------------------------------------------------------------
    def restore(self) -> None:
        """Put every changed input back as it was (the checks after timing use the sets' own references)."""
        t = _clock()
        for (s, name), rec in self._changes.items():
            values = self._hosts[s][name]
            flat = values.reshape(-1)
            for pos, old in reversed(rec.undo):
                flat[pos] = old
            device = self.sets[s][0]
            if rec.replaced is not None:
                device[name] = rec.replaced
            else:
                self._write(device, name, values, np.unique(np.concatenate([p for p, _ in rec.undo])), rec)
        self._changes.clear()
        self._hosts.clear()
        self._refs.clear()
        self.seconds += _clock() - t


def _snapshot(x: Any) -> Any:
    """A copy of an output taken at once: numpy copies now; torch, CuPy and OpenCL enqueue the copy on the
    current stream / queue, right behind the call (work left on another stream is not waited for)."""
    clone = getattr(x, "clone", None)
    if callable(clone):
        return clone()
    copy = getattr(x, "copy", None)
    return copy() if callable(copy) else x


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# -- the timer and the harness --------------------------------------------------------------------------------
#: Timer kinds whose device time is the host clock around the call: it cannot be far below the harness's clock.
HOST_CLOCK_TIMERS = ("sync+perf_counter",)
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


#: Timer kinds whose time is between events on one stream: work left on another stream escapes them.
DEVICE_EVENT_TIMERS = ("cuda-event", "hip-event", "torch-event")
#: The device may take this long (or half the sample, if more) to go idle after a sample's end event.
DEVICE_TAIL_S = 200e-6


def check_device_tail(kind: str, reported_s: float, tail_s: float) -> None:
    """After an event-timed sample, the time a synchronisation of the whole device took: work still running
    after the end event (another stream, a graph launched elsewhere) was not in the sample. Raises
    :class:`AuditFailed` naming :data:`FINISHES_LATER`."""
    if kind in DEVICE_EVENT_TIMERS and tail_s > max(DEVICE_TAIL_S, 0.5 * reported_s):
        raise AuditFailed(f"audit: the device was still busy {tail_s * 1e3:.3g} ms after the timed region's end event "
                          f"({reported_s * 1e3:.3g} ms): work went on outside the timed stream ({FINISHES_LATER})",
                          FINISHES_LATER)


#: cudaLimitPersistingL2CacheSize in the CUDA runtime's cudaLimit enum.
_CUDA_LIMIT_PERSISTING_L2 = 0x06


def _loaded_cudart() -> Any:
    """The CUDA runtime library this process has loaded (torch and CuPy bring their own), or None."""
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


#: What the harness measures and checks with: a kernel that replaces one of these is tampering.
GUARDED = (
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("time", "monotonic"),
    ("workbench.backends.base", "SyncWallTimer.measure"), ("workbench.backends.base", "EventTimer.measure"),
    ("workbench.backends.opencl_backend", "MarkerTimer.measure"),
    ("workbench.harness.timer", "time_calls"), ("workbench.harness.timer", "relative_spread"),
    ("workbench.harness.stats", "summarize"), ("workbench.harness.stats", "relative_spread"),
    ("workbench.case", "check"), ("workbench.case", "reference_outputs"), ("workbench.case", "Case.run_and_check"),
    ("workbench.case", "Case.fetch"), ("workbench.harness.audit", "Auditor.check"),
    ("workbench.harness.audit", "Auditor.arm"), ("workbench.harness.audit", "check_timer"),
)


class HarnessGuard:
    """The identities of :data:`GUARDED` when first seen; :meth:`tampered` lists (and puts back) any replaced."""

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
        for module, path in GUARDED:
            where = self._owner(module, path)
            if where is not None and (module, path) not in self._seen:
                self._seen[(module, path)] = where[0].__dict__.get(where[1], getattr(where[0], where[1], None))

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


#: One guard per process, first seen when this module is imported (before any kernel is built).
GUARD = HarnessGuard()
for _m in ("workbench.backends.base", "workbench.harness.stats", "workbench.case"):
    importlib.import_module(_m)
GUARD.snapshot()


# -- the parent's side ----------------------------------------------------------------------------------------
def check_reported(samples: Sequence[float] | None, median_s: float | None, calls_per_sample: int | None,
                   elapsed_s: float) -> list[str]:
    """Problems with timings a worker reported, judged with the parent's own clock: the median must be that of
    the samples, and the samples' total time at most the ``elapsed_s`` the parent waited for the cell."""
    if not samples:
        return []
    problems = []
    median = float(np.median(samples))
    if median_s is not None and not math.isclose(float(median_s), median, rel_tol=1e-9, abs_tol=1e-15):
        problems.append(f"its median {float(median_s):.3g} s is not the median {median:.3g} s of its samples")
    total = float(np.sum(samples)) * float(calls_per_sample or 1)
    if total > elapsed_s * 1.001 + 1e-3:
        problems.append(f"its samples add up to {total:.3g} s but the parent waited only {elapsed_s:.3g} s for it")
    return problems


def judge_reported(res: Any, elapsed_s: float) -> Any:
    """A :class:`~workbench.harness.result.CellResult` from a worker, made ``incorrect`` (timings kept) when
    :func:`check_reported` finds a problem; returned."""
    t = res.timing
    problems = check_reported(t.samples_s, t.median_s, t.calls_per_sample, elapsed_s)
    if problems and res.status in (Status.OK, Status.IMPLAUSIBLE):
        res.end(Status.INCORRECT, f"audit (parent): {'; '.join(problems)} ({TAMPERS})")
    return res


# -- explaining a failed check --------------------------------------------------------------------------------
#: Relative error bands of arithmetic narrower than the run's dtype: (run dtype, low, high, what).
PRECISION_BANDS = (("float32", 5e-5, 5e-2, "float16, bfloat16 or TF32"), ("float64", 1e-9, 1e-5, "float32"))


def precision_note(dtype: str, max_error: float | None, tolerance: float | None) -> str:
    """A note when a failed check's error is the size lower-precision arithmetic gives, else ``""``."""
    if max_error is None or tolerance is None or not math.isfinite(max_error) or max_error <= tolerance:
        return ""
    for run, low, high, what in PRECISION_BANDS:
        if dtype == run and low <= max_error <= high:
            return (f"; an error of {max_error:.2g} is what {what} arithmetic gives in a {dtype} run "
                    f"({TRADES_PRECISION})")
    return ""


#: What :meth:`workbench.case.Case.run_and_check` says of writes outside an output and changed inputs: such a
#: failure is not about the output's values, so a right output later does not mean it finished late.
_NOT_VALUES = ("modified its input", "past the end of", "before the start of")


def explain_failure(case: Case, check: CheckResult,
                    others: Sequence[tuple[int, dict[str, np.ndarray], dict[str, np.ndarray]]] = (),
                    own: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None = None) -> str:
    """Words naming the class of a failed check of ``case`` whose outputs were just written for ``own`` (host
    inputs, reference; default the case's): the output still changing, or right a moment later
    (:data:`FINISHES_LATER`); the answer for one of the ``others`` (set number, host inputs, reference) input
    sets of this cell (:data:`STALE`); or an error of lower precision (:data:`TRADES_PRECISION`)."""
    if check.passed:
        return ""
    host, ref = own if own is not None else (case.host_inputs, case.reference)
    try:
        first = case.fetch(case.outputs)
        time.sleep(LATE_WAIT_S)
        later = case.fetch(case.outputs)
        again = _check_outputs(case.spec, later, ref, case.dtype, host, case.params)
    except Exception:  # noqa: BLE001 - the failure stands as it is; this only names it
        return precision_note(case.dtype, check.max_error, check.tolerance)
    changed = not all(k in later and _same_bits(v, later[k]) for k, v in first.items())
    if changed or (again.passed and not any(t in check.message for t in _NOT_VALUES)):
        return (f"; the output was {'still changing' if changed else 'right'} {LATE_WAIT_S * 1e3:.0f} ms after the "
                f"call returned: work went on after it ({FINISHES_LATER})")
    for i, h, r in others:
        if _check_outputs(case.spec, later, r, case.dtype, h, case.params).passed:
            return f"; it is the answer for input set {i}: a stale answer ({STALE})"
    return precision_note(case.dtype, check.max_error, check.tolerance)


def precision_settings() -> dict[str, Any] | None:
    """The precision settings in force for float32 math, where a runtime that has them is loaded (TF32 lets a
    float32 matmul round its inputs to 10 bits): torch's flags, CuPy's ``CUPY_TF32``; None when neither is."""
    out: dict[str, Any] = {}
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_float32_matmul_precision"):
        try:
            out.update(torch_matmul_allow_tf32=bool(torch.backends.cuda.matmul.allow_tf32),
                       torch_cudnn_allow_tf32=bool(torch.backends.cudnn.allow_tf32),
                       torch_float32_matmul_precision=str(torch.get_float32_matmul_precision()))
        except Exception:  # noqa: BLE001 - a torch without these flags records none
            pass
    if "cupy" in sys.modules:
        import os

        out["cupy_tf32"] = os.environ.get("CUPY_TF32", "0")
    return out or None


def reduced_precision(settings: Mapping[str, Any] | None, dtype: str) -> str:
    """Why a ``dtype`` run's float32 math may be rounded (TF32 allowed), or ``""``."""
    if not settings or dtype != "float32":
        return ""
    found = [k for k in ("torch_matmul_allow_tf32", "torch_cudnn_allow_tf32") if settings.get(k)]
    if settings.get("torch_float32_matmul_precision") not in (None, "highest"):
        found.append(f"float32 matmul precision {settings['torch_float32_matmul_precision']!r}")
    if str(settings.get("cupy_tf32", "0")) not in ("0", ""):
        found.append("CUPY_TF32")
    return f"TF32 allowed in a float32 run ({', '.join(found)})" if found else ""


# -- impossible speed -----------------------------------------------------------------------------------------
#: The swappable roof test until a measured top roof (L1 bandwidth, peak FLOP/s) is known for the device: no
#: cache moves data more than this many times the DRAM roof, no kernel beats the FLOP roof by more than this.
FALLBACK_BANDWIDTH_FACTOR = 64.0
FALLBACK_FLOPS_FACTOR = 1.5


def implausible_reason(row: Mapping[str, Any], roofs: Any = None) -> str | None:
    """Why a measured rate is beyond the device, else None: the roofs' own test
    (:func:`workbench.roofs.above_top_roof`) where the device's roof set is known, and where it has no top
    bandwidth roof, a bandwidth above :data:`FALLBACK_BANDWIDTH_FACTOR` times the row's DRAM ceiling or a FLOP
    rate above :data:`FALLBACK_FLOPS_FACTOR` times its FLOP ceiling."""
    if roofs is not None:
        from ..roofs import above_top_roof

        reason = above_top_roof(row, roofs)
        if reason:
            return f"{reason} ({IMPOSSIBLE_SPEED})"
        if roofs.top_bandwidth() is not None:
            return None
    reasons = []
    gbps, bw = _num(row.get("gbps")), _num(row.get("ceiling_gbps"))
    if gbps is not None and bw and gbps > FALLBACK_BANDWIDTH_FACTOR * bw:
        reasons.append(f"{gbps:.3g} GB/s is {gbps / bw:.0f}x the {bw:.3g} GB/s DRAM roof: no cache level is that "
                       "much faster")
    gflops, fl = _num(row.get("gflops")), _num(row.get("ceiling_gflops"))
    if gflops is not None and fl and gflops > FALLBACK_FLOPS_FACTOR * fl:
        reasons.append(f"{gflops:.3g} GFLOP/s is {gflops / fl:.1f}x the {fl:.3g} GFLOP/s roof")
    if not reasons:
        return None
    return ("implausible: " + "; ".join(reasons)
            + f": the timing, not the kernel, is what was measured ({IMPOSSIBLE_SPEED})")


def _num(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None

"""Audits: a kernel cannot tell a timed call from a checked one, so it cannot skip its work when timed.

Why: a correctness check that poisons outputs with NaN and runs once is easy to see; a variant that computes
only when it sees the poison, memoizes by a cheap fingerprint of its input, finishes its work after the call
returns, patches the harness, or computes in a lower precision was timed as "faster" than any honest one
(issue 23). Each class of gaming is named in the message of the cell that shows it (:data:`CLASSES`).

- :class:`Auditor` picks timed samples at random (from a generator the cell's seed does not predict): before
  one, the input set its last call reads is switched to a changed version (a few hundred random positions
  holding values copied from other positions of the same input, so they stay in range; written in place), a
  few values of the previous answer in the output move (no poison to recognise), and the call's output is
  copied the moment it returns. A version's reference is computed the first time an audit needs it, after
  the call, and kept sealed (:func:`_seal`); versions are drawn once per process and shared by every cell
  and round of the same inputs, so audits stay cheap (tests/perf/audit_cost.py). Inputs also switch state
  at random between samples that are not audited, so a change does not announce an audit; every change is
  undone after the loop. A loop whose certain audit never came audits one more call at its end.
- :func:`check_device_tail` and :func:`reset_persisting_l2` are the GPU forms: event-timed samples end with
  a synchronisation of the whole device; no L2 lines stay pinned from one cell to the next.
- :func:`check_timer` compares what the timer reported with the harness's own clock;
  :class:`HarnessGuard` notices a replaced timer, statistic or check function (and puts the original back).
- :func:`judge_reported` is the parent's side: statistics recomputed from the samples, and the samples' total
  within the parent's own clock of the cell.
- :func:`explain_failure` names the class of a failed check where the evidence says which (the output
  complete only later, another input set's answer, an error of the size lower-precision arithmetic gives);
  :func:`precision_settings` records TF32 and matmul precision.
- :func:`implausible_reason` is the impossible-speed test (the device's top roof, or a simple DRAM-multiple
  check where no top roof is measured).
"""

from __future__ import annotations

import importlib
import math
import secrets
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.dtypes import reduced_float32_flags
from workbench.core.record import number_or_none
from workbench.core.status import Status
from workbench.measure.case import Case, CheckResult, normalize_outputs
from workbench.measure.case import (
    check as _check_outputs,  # bound here: replacing workbench.measure.case.check later does not reach audits
)
from workbench.measure.case import reference_outputs as _reference_outputs
from workbench.roofs.model import above_top_roof, flops_roof_of

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

    def pending(self, calls: Sequence[Call]) -> Call | None:
        return None

    def restore(self) -> None:
        return None


@dataclass
class _Version:
    """One changed version of an input set: per input, the flat positions changed and their new values; its
    compare copy once an audit needed it (and its float64 reference where the spec compares in its own way)."""

    changes: dict[str, tuple[np.ndarray, np.ndarray]]
    #: Kept sealed (:func:`_seal`): a kernel searching the heap for a float64 array of its output's shape
    #: does not find it.
    reference: dict[str, _Sealed] | None = None
    #: The reference as audits compare with it (:class:`_Expected`), sealed too.
    expected: dict[str, _Expected] | None = None
    #: The float64 reference made with the version when it came from a sweep's shared arrays (every worker of
    #: the sweep uses that one version of the set; the reference was made once, by the first to need it).
    shared_reference: dict[str, np.ndarray] | None = None

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes + v.nbytes for p, v in self.changes.values()) + sum(
            r.data.nbytes for r in (self.reference or {}).values()) + sum(
            e.ref.data.nbytes for e in (self.expected or {}).values())


@dataclass(frozen=True)
class _Sealed:
    """An array's bytes XORed with a per-process random key: no longer an array of its dtype and shape."""

    data: np.ndarray
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class _Expected:
    """One output's reference as an audit compares with it: in the compare dtype (float32, float64 for float64
    runs), with the reference's magnitude, so a check is one subtraction and one maximum."""

    ref: _Sealed
    scale: float


def _expected_from(reference: Mapping[str, np.ndarray], dtype: str) -> dict[str, _Expected]:
    cmp = np.float64 if dtype == "float64" else np.float32
    out = {}
    for k, r in reference.items():
        r = np.asarray(r)
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        out[k] = _Expected(_seal({k: r.astype(cmp)})[k], scale or 1.0)
    return out


_SEAL_KEY = np.frombuffer(secrets.token_bytes(8), np.uint64)[0]


def _seal(arrays: Mapping[str, np.ndarray]) -> dict[str, _Sealed]:
    out = {}
    for k, a in arrays.items():
        a = np.ascontiguousarray(a)
        raw = a.reshape(-1).view(np.uint8)
        data = raw.view(np.uint64) ^ _SEAL_KEY if raw.size % 8 == 0 else raw ^ np.uint8(_SEAL_KEY & 0xFF)
        out[k] = _Sealed(data, a.shape, a.dtype)
    return out


def _unseal(sealed: Mapping[str, _Sealed]) -> dict[str, np.ndarray]:
    out = {}
    for k, s in sealed.items():
        raw = s.data ^ (_SEAL_KEY if s.data.dtype == np.uint64 else np.uint8(_SEAL_KEY & 0xFF))
        out[k] = raw.view(np.uint8).view(s.dtype).reshape(s.shape)
    return out


#: Changed versions of each input set, per process: drawn once (from an unseeded generator), shared by every
#: cell and round of the same inputs, so each version's reference is computed once per group, not per audit
#: (the cost target). Least recently used versions go first past :data:`VERSION_CACHE_BYTES`.
VERSIONS_PER_SET = 1
#: 64 MiB: one version of a large group holds its sealed float64 reference and its compare copy (~96 MiB for a
#: 32 MiB output, two input sets a group), so 256 MiB kept one or two large groups per worker process, which the
#: next round's shuffled order seldom came back to first (most of a quick suite's worker memory, issue 25).
#: The group in use always stays, every input set of it (eviction runs before a new set is added and passes over
#: the group's own sets: evicting them made each audited set of a large group recompute its version's reference
#: for every cell and round), and small groups stay between rounds. A version keeps only its compare copy
#: (:class:`_Expected`), not the float64 reference it came from, unless the spec compares in its own way.
VERSION_CACHE_BYTES = 64 << 20
_versions: OrderedDict[tuple[Any, ...], list[_Version]] = OrderedDict()
_version_rng = np.random.default_rng(secrets.randbits(128))
#: Positions an input set's identity is read at (with its kernel, size, dtype, shapes): drawn per process.
_PROBES = _version_rng.integers(1 << 62, size=32)


def _set_key(case: Case, host: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
    """An input set's identity: its kernel, size and dtype, and each input's shape and values at
    :data:`_PROBES` (seeded sets differ everywhere; reading all of a large input would cost a pass over it)."""
    def probe(v: np.ndarray) -> bytes:
        flat = v.reshape(-1)
        return flat[_PROBES % flat.size].tobytes() if flat.size else b""
    return (case.spec.name, tuple(sorted(case.params.items())), case.dtype,
            tuple((k, v.shape, str(v.dtype), probe(v)) for k, v in sorted(host.items())))


def _versions_of(case: Case, host: Mapping[str, np.ndarray]) -> list[_Version]:
    key = _set_key(case, host)
    found = _versions.get(key)
    if found is None:
        group = key[:3]  # kernel, size, dtype: its other input sets' versions stay while it is in use
        total = sum(v.nbytes for vs in _versions.values() for v in vs)
        for old in [k for k in _versions if k[:3] != group]:
            if total <= VERSION_CACHE_BYTES:
                break
            total -= sum(v.nbytes for v in _versions.pop(old))
        found = _versions[key] = [_new_version(host) for _ in range(VERSIONS_PER_SET)]
    _versions.move_to_end(key)
    return found


def landmarks(shape: tuple[int, ...]) -> np.ndarray:
    """Flat positions a cheap fingerprint of an array would read: the first and last few elements, those
    around the middle and the quarters, and a matrix's corners and the ends of its middle row. A version
    never changes them, so a memoizer keyed on them always meets a changed input under an old key (one whose
    random changes hit a[0], a[n // 2] or a[-1] computed the changed answer afresh, and passed a verify run in
    about 40)."""
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return np.empty(0, np.int64)
    around = [0, size // 4, size // 2, (3 * size) // 4, size - 1]
    pos = [p + d for p in around for d in range(-LANDMARK_REACH, LANDMARK_REACH + 1)]
    if len(shape) >= 2:
        cols = int(shape[-1])
        rows = size // cols if cols else 0
        for r in (0, rows // 2, rows - 1):
            pos += [r * cols + c for c in (0, 1, cols // 2, cols - 2, cols - 1)]
    return np.unique(np.clip(np.asarray(pos, np.int64), 0, size - 1))


#: Elements on either side of each landmark position that a version leaves alone too.
LANDMARK_REACH = 3


def _change_positions(shape: tuple[int, ...], m: int) -> np.ndarray:
    """``m`` (or fewer, for a small array) distinct random flat positions, none of them a :func:`landmarks`
    position where the array has enough others."""
    size = int(np.prod(shape))
    marks = landmarks(shape)
    if size - len(marks) < 2 * m:  # a tiny array: any position
        return np.unique(_version_rng.integers(size, size=m))
    pos = np.empty(0, np.int64)
    while len(pos) < m:
        draw = _version_rng.integers(size, size=2 * m)
        pos = np.unique(np.concatenate([pos, draw[~np.isin(draw, marks)]]))
    return np.sort(_version_rng.permutation(pos)[:m])


def _new_version(host: Mapping[str, np.ndarray]) -> _Version:
    """Values copied from random positions of each input to other random positions (so they stay in range),
    never to a :func:`landmarks` position: a cheap fingerprint of a few fixed elements stays the same; the
    answer does not."""
    changes = {}
    for name, values in host.items():
        arr = np.asarray(values)
        flat = arr.reshape(-1)
        if flat.size < 2:
            continue
        m = int(min(MAX_CHANGES, max(MIN_CHANGES, flat.size * CHANGE_SHARE)))
        pos = _change_positions(arr.shape, m)
        src = _version_rng.integers(flat.size, size=pos.size)
        changes[name] = (pos, flat[src].copy())
    return _Version(changes)


def _apply(host: Mapping[str, np.ndarray], version: _Version | None) -> dict[str, np.ndarray]:
    """A copy of ``host`` with ``version``'s changes (``host`` itself when none)."""
    if version is None:
        return dict(host)
    out = {k: np.array(v, copy=True) for k, v in host.items()}
    for name, (pos, values) in version.changes.items():
        out[name].reshape(-1)[pos] = values
    return out


class Auditor:
    """The audits of one timing loop over ``sets`` (device inputs, host inputs), all writing to ``out``.

    ``min_samples``: one of the loop's first samples is always audited, chosen at random (postponed until its
    input set has been called once: a memoizer computes a set it has never seen). ``probability``: of
    auditing each further sample, while audits and input changes take at most ``cost_share`` of the loop.
    """

    def __init__(self, case: Case, sets: Sequence[tuple[dict[str, Any], dict[str, np.ndarray]]],
                 out: dict[str, Any], *, min_samples: int = 1, probability: float = AUDIT_PROBABILITY,
                 cost_share: float = AUDIT_COST_SHARE, rng: np.random.Generator | None = None,
                 reference_of: Callable[[int], Mapping[str, np.ndarray]] | None = None,
                 shared_version: Callable[[int, Callable[[], dict[str, np.ndarray]]], Mapping[str, np.ndarray]]
                 | None = None) -> None:
        self.case, self.sets, self.out = case, list(sets), out
        #: Set ``s``'s changed version as arrays (positions, values, its float64 reference) from a store every
        #: worker of a sweep shares, made with the function given when missing: one version of each input set
        #: for the whole sweep, its reference made once, instead of per worker process and round (the largest
        #: quick-suite groups made it 15 times: five backends' workers, three rounds).
        self._shared_version = shared_version
        #: Set ``s``'s float64 reference where the caller has it already (a sweep's input cache keeps one per
        #: seed for every round of the group): computing it again cost half of a large cell's wall time.
        self._reference_of = reference_of
        self.rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
        self._first = int(self.rng.integers(max(1, min_samples)))
        self._sampled = 0
        self._first_done = False
        self._seen: set[int] = set()
        self.probability, self.cost_share = probability, cost_share
        self._now: dict[int, int] = {}  # set -> index of the version its device inputs hold now
        self._set_versions: dict[int, list[_Version]] = {}
        self._replaced: dict[tuple[int, str], Any] = {}  # device arrays replaced (not writable in place)
        self._original_refs: dict[int, dict[str, _Sealed]] = {}
        self._original_expected: dict[int, dict[str, _Expected]] = {}
        self._armed: int | None = None
        #: Per output, the positions the refill before an audited call moved values to, and what they held then.
        self._before: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
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
            self._change(last, audit)
        fn = None
        if audit:
            self._armed = last
            self._before = self._refill()
            fn = self._batch([calls[(offset + i) % m] for i in range(k - 1)], last)
        self.seconds += _clock() - t
        return fn

    def pending(self, calls: Sequence[Call]) -> Call | None:
        """At the loop's end, when its one certain audit never came (the loop stopped before the sample chosen
        for it, or that sample's set had not been called yet): one more call, like every other, audited."""
        if self._first_done or not calls:
            return None
        t = _clock()
        self._first_done = True
        s = int(self.rng.choice(sorted(self._seen))) if self._seen else 0
        self._change(s, True)
        self._armed = s
        self._before = self._refill()
        fn = self._batch([], s)
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

    def _refill(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Move a few values of the previous answer in the output buffers to other positions: still a plausible
        answer (no poison to see), but not bit for bit one a kernel could have written for any input. Returns,
        per output, the positions moved to and the values they hold now (an untouched output still has them)."""
        moved = {}
        for name, dev in self.out.items():
            size = int(dev.numel() if callable(getattr(dev, "size", None)) else getattr(dev, "size", 0))
            if size < 2:
                continue
            m = int(min(MAX_CHANGES, max(MIN_CHANGES, size * CHANGE_SHARE)))
            pos, src = self.rng.integers(size, size=m), self.rng.integers(size, size=m)
            if _move_in_place(dev, pos, src):
                moved[name] = (pos, self._host({name: dev})[name].reshape(-1)[pos] if not isinstance(dev, np.ndarray)
                               else dev.reshape(-1)[pos].copy())
                continue
            flat = self._host({name: dev})[name].reshape(-1)
            flat[pos] = flat[src]
            if _write_in_place(dev, pos, flat[pos]):
                moved[name] = (pos, flat[pos].copy())
        return moved

    def _versions(self, s: int) -> list[_Version]:
        if s not in self._set_versions:
            self._set_versions[s] = (_versions_of(self.case, self.sets[s][1]) if self._shared_version is None
                                     else [self._shared(s)])
        return self._set_versions[s]

    def _shared(self, s: int) -> _Version:
        """Set ``s``'s version from the caller's store (one per set for the whole sweep, every worker alike),
        made here with its reference when no process made it yet."""
        assert self._shared_version is not None
        host = self.sets[s][1]

        def make() -> dict[str, np.ndarray]:
            version = _new_version(host)
            ref = _reference_outputs(self.case.spec, _apply(host, version), self.case.params)
            arrays = {f"pos__{k}": p for k, (p, _) in version.changes.items()}
            arrays |= {f"val__{k}": v for k, (_, v) in version.changes.items()}
            return arrays | {f"ref__{k}": np.asarray(r) for k, r in ref.items()}

        arrays = self._shared_version(s, make)
        changes = {k[5:]: (np.asarray(a), np.asarray(arrays[f"val__{k[5:]}"])) for k, a in arrays.items()
                   if k.startswith("pos__")}
        return _Version(changes, shared_reference={k[5:]: a for k, a in arrays.items() if k.startswith("ref__")})

    def _change(self, s: int, audit: bool) -> None:
        """Before an audit, set ``s``'s device inputs to a changed version (the answer every earlier call with
        the original values gave is stale); between other samples, to another state (original or changed), so
        a change announces nothing."""
        versions = self._versions(s)
        now = self._now.get(s)
        states: list[int | None] = list(range(len(versions))) if audit else [None, *range(len(versions))]
        others = [v for v in states if v != now] or states
        choice = others[int(self.rng.integers(len(others)))]
        if choice != now:
            self._put(s, versions[now] if now is not None else None, versions[choice] if choice is not None else None)
        if choice is None:
            self._now.pop(s, None)
        else:
            self._now[s] = choice
        self.changes += 1

    def _put(self, s: int, old: _Version | None, new: _Version | None) -> None:
        """Device inputs of set ``s`` from holding ``old`` (None: the original values) to holding ``new``:
        positions written in place where the runtime allows (the kernel sees the same objects), else new
        device arrays in the same input dict."""
        device, host = self.sets[s]
        for name in host:
            if name not in device:
                continue
            old_pos = old.changes[name][0] if old is not None and name in old.changes else None
            new_change = new.changes.get(name) if new is not None else None
            if old_pos is None and new_change is None:
                continue
            flat = np.asarray(host[name]).reshape(-1)
            pos = np.concatenate([p for p in (old_pos, new_change[0] if new_change else None) if p is not None])
            target = flat[pos].copy()
            if new_change is not None:
                target[len(pos) - len(new_change[0]):] = new_change[1]
            pos, last = np.unique(pos[::-1], return_index=True)  # the new version's value wins where both write
            target = target[::-1][last]
            if (s, name) not in self._replaced and _write_in_place(device[name], pos, target):
                continue
            full = _apply(host, new)[name]
            if (s, name) not in self._replaced and _set_whole(device[name], full):
                continue
            self._replaced.setdefault((s, name), device[name])
            device[name] = self.case.backend.to_device(full, self.case.dtype) if new is not None \
                else self._replaced.pop((s, name))

    # -- after a sample ----------------------------------------------------------------------------------------
    def check(self) -> None:
        """After an audited sample: its last call's output, read at return, against the reference of the
        inputs it was given; the first wrong answer is kept in :attr:`failure`, naming the class."""
        if self._armed is None:
            return
        t = _clock()
        s, self._armed = self._armed, None
        snap, self._snap = self._snap, None
        try:
            got = self._host(snap, copy=False) if snap is not None else self._host(self._result)
            v = self._now.get(s)
            self.audits += 1
            if self.case.spec.compare is None and self._close(got, self._expected(s, v)):
                return
            ref = self._reference(s, v)
            res = _check_outputs(self.case.spec, got, ref, self.case.dtype, self._host_inputs(s, v), self.case.params)
            if not res.passed and self.failure is None:
                what, kind = self._diagnose(s, got, ref)
                self.failure = AuditFailed(f"audit: {what} on an audited timed call (rotated input set {s}, values "
                                           f"changed just before): {res.message or 'wrong output'} ({kind})", kind, res)
        finally:
            self._result = self._before = None
            self.seconds += _clock() - t

    def _version(self, s: int, v: int | None) -> _Version | None:
        return None if v is None else self._versions(s)[v]

    def _host_inputs(self, s: int, v: int | None) -> dict[str, np.ndarray]:
        """Set ``s``'s host inputs in version ``v`` (a copy is made only where the spec compares with inputs)."""
        if self.case.spec.compare is None:
            return dict(self.sets[s][1])
        return _apply(self.sets[s][1], self._version(s, v))

    def _reference(self, s: int, v: int | None) -> dict[str, np.ndarray]:
        """Set ``s``'s float64 reference in version ``v`` (None: unchanged). An unchanged set's comes from the
        caller where it has one; a changed version's is computed when an audit needs it and kept (sealed) only
        where the spec's own compare needs it at every audit: the lean check uses the version's compare copy,
        so a full reference is needed again only to word a failure."""
        if v is None:
            known = self._reference_of(s) if self._reference_of is not None else None
            if known is not None:  # the caller's copy: no second one kept here
                return dict(known)
            if s not in self._original_refs:
                self._original_refs[s] = _seal(_reference_outputs(self.case.spec, self.sets[s][1], self.case.params))
            return _unseal(self._original_refs[s])
        version = self._version(s, v)
        assert version is not None
        if version.shared_reference is not None:
            return dict(version.shared_reference)
        if version.reference is not None:
            return _unseal(version.reference)
        ref = _reference_outputs(self.case.spec, _apply(self.sets[s][1], version), self.case.params)
        if self.case.spec.compare is not None:  # every audit of such a spec compares with the full reference
            version.reference = _seal(ref)
        return ref

    def _expected(self, s: int, v: int | None) -> dict[str, _Expected]:
        if v is None:
            if s not in self._original_expected:
                self._original_expected[s] = _expected_from(self._reference(s, None), self.case.dtype)
            return self._original_expected[s]
        version = self._version(s, v)
        assert version is not None
        if version.expected is None:
            version.expected = _expected_from(self._reference(s, v), self.case.dtype)
        return version.expected

    def _close(self, got: Mapping[str, np.ndarray], expected: Mapping[str, _Expected]) -> bool:
        """The lean check of an audited output: every output present, of its shape, within the tolerance of
        its reference (relative to the reference's magnitude; NaN fails). A failure is checked again in full
        (:func:`workbench.measure.case.check`) for its message."""
        tol = self.case.spec.tolerance(self.case.dtype)
        for name, e in expected.items():
            out = got.get(name)
            ref = _unseal({name: e.ref})[name]
            if out is None or np.shape(out) != ref.shape:
                return False
            if ref.size and not float(np.max(np.abs(np.asarray(out, ref.dtype) - ref))) / e.scale <= tol:
                return False
        return True

    def _passes(self, got: dict[str, np.ndarray], ref: dict[str, np.ndarray], host: dict[str, np.ndarray]) -> bool:
        return _check_outputs(self.case.spec, got, ref, self.case.dtype, host, self.case.params).passed

    def _diagnose(self, s: int, got: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> tuple[str, str]:
        """What the wrong output looks like, and the class that explains it."""
        for waited in range(1, LATE_POLLS + 1):
            time.sleep(LATE_WAIT_S)
            later = self._host(self._result) if self._result is not None else None
            if later is not None and not all(k in later and _same_bits(v, later[k]) for k, v in got.items()):
                right = " (and right then)" if self._passes(later, ref, self._host_inputs(s, self._now.get(s))) else ""
                return (f"the output was still being written {waited * LATE_WAIT_S * 1e3:.0f} ms after the call "
                        f"returned{right}", FINISHES_LATER)
        if self._before and all(k in got and _same_bits(got[k].reshape(-1)[pos], held)
                                for k, (pos, held) in self._before.items()):
            return "the output was left holding the previous call's answer", WORKS_ONLY_WHEN_CHECKED
        for j in [s, *(j for j in range(len(self.sets)) if j != s)]:
            versions: list[int | None] = [None, *range(VERSIONS_PER_SET)]
            for v in versions:
                if j == s and v == self._now.get(s):
                    continue
                if self._passes(got, self._reference(j, v), self._host_inputs(j, v)):
                    whose = "the input's" if j == s else f"input set {j}'s"
                    when = "before they changed" if v is None else "in another changed version"
                    return f"a stale answer, for {whose} values {when}", STALE
        return "a wrong answer where checked calls were right", WORKS_ONLY_WHEN_CHECKED

    def _host(self, outputs: Mapping[str, Any], copy: bool = True) -> dict[str, np.ndarray]:
        """Host arrays of ``outputs`` (copies, unless they are private copies already: ``copy=False``)."""
        self.case.backend.synchronize()
        return {k: np.array(self.case.backend.to_numpy(v), copy=copy) if copy else
                np.asarray(self.case.backend.to_numpy(v)) for k, v in outputs.items()}

    # -- after the loop ----------------------------------------------------------------------------------------
    def restore(self) -> None:
        """Put every changed input set back to its original values (the checks after timing use the sets' own
        references)."""
        t = _clock()
        for s, v in list(self._now.items()):
            self._put(s, self._version(s, v), None)
        self._now.clear()
        self.seconds += _clock() - t


def _writable(dev: Any) -> bool:
    if isinstance(dev, np.ndarray):
        return dev.flags.c_contiguous and dev.flags.writeable
    module = type(dev).__module__.split(".")[0]
    if module == "torch":
        return bool(dev.is_contiguous())
    if module == "cupy":
        return bool(dev.flags.c_contiguous)
    return False


def _set_whole(dev: Any, values: np.ndarray) -> bool:
    """The whole of ``values`` copied into ``dev`` (PyOpenCL's and CuPy's ``set``: the same device buffer, so a
    variant that bound its arguments once still reads the new values); False where there is no such method."""
    put = getattr(dev, "set", None)
    if not callable(put) or getattr(dev, "shape", None) != values.shape:
        return False
    try:
        put(np.ascontiguousarray(values, dtype=dev.dtype))
    except Exception:  # noqa: BLE001 - a runtime that refuses: the input is replaced instead
        return False
    return True


def _write_in_place(dev: Any, pos: np.ndarray, values: np.ndarray) -> bool:
    """``dev.flat[pos] = values`` on the device, where the runtime allows; False where it does not."""
    if not _writable(dev):
        return False
    if isinstance(dev, np.ndarray):
        dev.reshape(-1)[pos] = values.astype(dev.dtype, copy=False)
        return True
    if type(dev).__module__.split(".")[0] == "torch":
        torch = sys.modules["torch"]
        dev.view(-1)[torch.as_tensor(pos, device=dev.device)] = torch.as_tensor(values).to(dev.device, dev.dtype)
        return True
    cp = sys.modules["cupy"]
    dev.reshape(-1)[cp.asarray(pos)] = cp.asarray(values).astype(dev.dtype)
    return True


def _move_in_place(dev: Any, pos: np.ndarray, src: np.ndarray) -> bool:
    """``dev.flat[pos] = dev.flat[src]`` on the device, where the runtime allows; False where it does not."""
    if not _writable(dev):
        return False
    if isinstance(dev, np.ndarray):
        flat = dev.reshape(-1)
        flat[pos] = flat[src]
        return True
    if type(dev).__module__.split(".")[0] == "torch":
        torch = sys.modules["torch"]
        flat = dev.view(-1)
        flat[torch.as_tensor(pos, device=dev.device)] = flat[torch.as_tensor(src, device=dev.device)]
        return True
    cp = sys.modules["cupy"]
    flat = dev.reshape(-1)
    flat[cp.asarray(pos)] = flat[cp.asarray(src)]
    return True


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
    ("workbench.measure.timer", "time_calls"), ("workbench.measure.timer", "relative_spread"),
    ("workbench.judge.stats", "summarize"), ("workbench.judge.stats", "relative_spread"),
    ("workbench.measure.case", "check"), ("workbench.measure.case", "reference_outputs"),
    ("workbench.measure.case", "Case.run_and_check"),
    ("workbench.measure.case", "Case.fetch"), ("workbench.measure.audit", "Auditor.check"),
    ("workbench.measure.audit", "Auditor.arm"), ("workbench.measure.audit", "check_timer"),
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
for _m in ("workbench.backends.base", "workbench.judge.stats", "workbench.measure.case"):
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
    """A :class:`~workbench.measure.result.CellResult` from a worker, made ``incorrect`` (timings kept) when
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


#: What :meth:`workbench.measure.case.Case.run_and_check` says of writes outside an output and changed inputs: such a
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
    found = reduced_float32_flags(settings)
    return f"TF32 allowed in a float32 run ({', '.join(found)})" if found else ""


# -- impossible speed -----------------------------------------------------------------------------------------
#: The swappable roof test until a measured top roof (L1 bandwidth, peak FLOP/s) is known for the device: no
#: cache moves data more than this many times the DRAM roof, no kernel beats the FLOP roof by more than this.
FALLBACK_BANDWIDTH_FACTOR = 64.0
FALLBACK_FLOPS_FACTOR = 1.5


def implausible_reason(row: Mapping[str, Any], roofs: Any = None) -> str | None:
    """Why a measured rate is beyond the device, else None: the roofs' own test
    (:func:`workbench.roofs.model.above_top_roof`) where the device's roof set is known, and where it has no top
    bandwidth roof, a bandwidth above :data:`FALLBACK_BANDWIDTH_FACTOR` times the row's DRAM ceiling or a FLOP
    rate above :data:`FALLBACK_FLOPS_FACTOR` times its FLOP ceiling."""
    if roofs is not None:
        reason = above_top_roof(row, roofs)
        if reason:
            return f"{reason} ({IMPOSSIBLE_SPEED})"
        if roofs.top_bandwidth() is not None:
            return None
    reasons = []
    gbps, bw = number_or_none(row.get("gbps")), number_or_none(row.get("ceiling_gbps"))
    if gbps is not None and bw and gbps > FALLBACK_BANDWIDTH_FACTOR * bw:
        reasons.append(f"{gbps:.3g} GB/s is {gbps / bw:.0f}x the {bw:.3g} GB/s DRAM roof: no cache level is that "
                       "much faster")
    gflops, fl = number_or_none(row.get("gflops")), number_or_none(row.get("ceiling_gflops"))
    if row.get("dtype") == "float32" and reduced_float32_flags(row.get("precision")):
        tf32 = flops_roof_of(row, roofs) if roofs is not None else None  # the float32 ceiling does not bound it
        fl = tf32.value if tf32 is not None else None
    if gflops is not None and fl and gflops > FALLBACK_FLOPS_FACTOR * fl:
        reasons.append(f"{gflops:.3g} GFLOP/s is {gflops / fl:.1f}x the {fl:.3g} GFLOP/s roof")
    if not reasons:
        return None
    return ("implausible: " + "; ".join(reasons)
            + f": the timing, not the kernel, is what was measured ({IMPOSSIBLE_SPEED})")


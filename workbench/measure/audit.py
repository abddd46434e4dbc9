"""Audits: a kernel cannot tell a timed call from a checked one, so it cannot skip its work when timed.

Why: a correctness check that poisons outputs with NaN and runs once is easy to see; a variant that computes
only when it sees the poison, memoizes by a cheap fingerprint of its input, finishes its work after the call
returns, patches the harness, or computes in a lower precision was timed as "faster" than any honest one
(issue 23). Each class of gaming is named in the message of the cell that shows it
(:data:`~workbench.measure.gaming.CLASSES`).

:class:`Auditor` picks timed samples at random (from a generator the cell's seed does not predict): before
one, the input set its last call reads is switched to a changed version (:mod:`workbench.measure.audit_versions`:
a few hundred random positions holding values copied from other positions of the same input, so they stay in
range; written in place, :mod:`workbench.measure.array_edits`), a few values of the previous answer in the output
move (no poison to recognise), and the call's output is copied the moment it returns. A version's reference is
computed the first time an audit needs it, after the call, and kept sealed; versions are drawn once per process
and shared by every cell and round of the same inputs, so audits stay cheap (tests/perf/audit_cost.py). Inputs
also switch state at random between samples that are not audited, so a change does not announce an audit; every
change is undone after the loop. A loop whose certain audit never came audits one more call at its end.

The other audits live beside this module, their functions importable from it: the timer and the harness
(:mod:`workbench.measure.harness_audit`: :func:`check_timer`, :func:`check_device_tail`,
:func:`reset_persisting_l2`, the harness guard :data:`GUARD`), and the result
(:mod:`workbench.measure.result_audit`: :func:`judge_reported`, :func:`explain_failure`,
:func:`precision_settings`, :func:`implausible_reason`).
"""

from __future__ import annotations

import importlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from workbench.catalog.spec import Arrays, DeviceArrays
from workbench.measure.array_edits import move_in_place, same_bits, set_whole, snapshot, write_in_place
from workbench.measure.audit_versions import (
    CHANGE_SHARE,
    MAX_CHANGES,
    MIN_CHANGES,
    VERSIONS_PER_SET,
    Expected,
    Sealed,
    Version,
    apply_version,
    expected_from,
    new_version,
    seal,
    unseal,
    versions_of,
)
from workbench.measure.case import Case, normalize_outputs
from workbench.measure.case import (
    check as _check_outputs,  # bound here: replacing workbench.measure.case.check later does not reach audits
)
from workbench.measure.case import reference_outputs as _reference_outputs
from workbench.measure.gaming import (  # noqa: F401  (the classes of gaming, named here since the audits began)
    FINISHES_LATER,
    IMPOSSIBLE_SPEED,
    MEMOIZES,
    STALE,
    TAMPERS,
    TRADES_PRECISION,
    WORKS_ONLY_WHEN_CHECKED,
    AuditFailed,
)
from workbench.measure.harness_audit import (  # noqa: F401  (importers and tests reach them here)
    DEVICE_EVENT_TIMERS,
    GUARD,
    TAIL_SHARE_TO_FAIL,
    TAILS_TO_FAIL,
    check_device_tail,
    check_timer,
    reset_persisting_l2,
    tail_is_long,
)
from workbench.measure.input_set import InputSet, SharedVersion
from workbench.measure.result_audit import (  # noqa: F401  (importers and tests reach them here)
    LATE_WAIT_S,
    check_reported,
    explain_failure,
    implausible_reason,
    judge_reported,
    precision_note,
    precision_settings,
    reduced_precision,
)

Call = Callable[[], Any]

#: The harness's own clock, bound at import (a kernel replacing ``time.perf_counter`` later does not reach it).
_clock = time.perf_counter

#: Chance that a sample past the first audited one is audited, and (separately) that its inputs change.
AUDIT_PROBABILITY = 0.1
#: Optional audits and input changes stop while they have taken more than this share of the loop's time
#: (the first audit always runs): the cost target is <= 5% of a sweep (tests/perf/audit_cost.py).
AUDIT_COST_SHARE = 0.02
#: How many times (each after :data:`LATE_WAIT_S`) a failed audit looks before concluding the output is not
#: changing.
LATE_POLLS = 6


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


class Auditor:
    """The audits of one timing loop over ``sets`` (device inputs, host inputs), all writing to ``out``.

    ``min_samples``: one of the loop's first samples is always audited, chosen at random (postponed until its
    input set has been called once: a memoizer computes a set it has never seen). ``probability``: of
    auditing each further sample, while audits and input changes take at most ``cost_share`` of the loop.
    """

    def __init__(self, case: Case, sets: Sequence[InputSet], out: DeviceArrays, *, min_samples: int = 1,
                 probability: float = AUDIT_PROBABILITY, cost_share: float = AUDIT_COST_SHARE,
                 rng: np.random.Generator | None = None,
                 reference_of: Callable[[int], Arrays | None] | None = None,
                 shared_version: SharedVersion | None = None) -> None:
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
        self._set_versions: dict[int, list[Version]] = {}
        self._replaced: dict[tuple[int, str], Any] = {}  # device arrays replaced (not writable in place)
        self._original_refs: dict[int, dict[str, Sealed]] = {}
        self._original_expected: dict[int, dict[str, Expected]] = {}
        self._armed: int | None = None
        #: Per output, the positions the refill before an audited call moved values to, and what they held then.
        self._before: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
        self._result: Any = None
        self._snap: DeviceArrays | None = None
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
            self._snap = {k: snapshot(v) for k, v in result.items()}  # read at return, before anything else
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
            if move_in_place(dev, pos, src):
                moved[name] = (pos, self._host({name: dev})[name].reshape(-1)[pos] if not isinstance(dev, np.ndarray)
                               else dev.reshape(-1)[pos].copy())
                continue
            flat = self._host({name: dev})[name].reshape(-1)
            flat[pos] = flat[src]
            if write_in_place(dev, pos, flat[pos]):
                moved[name] = (pos, flat[pos].copy())
        return moved

    def _versions(self, s: int) -> list[Version]:
        if s not in self._set_versions:
            self._set_versions[s] = (versions_of(self.case, self.sets[s][1]) if self._shared_version is None
                                     else [self._shared(s)])
        return self._set_versions[s]

    def _shared(self, s: int) -> Version:
        """Set ``s``'s version from the caller's store (one per set for the whole sweep, every worker alike),
        made here with its reference when no process made it yet."""
        assert self._shared_version is not None
        host = self.sets[s][1]

        def make() -> Arrays:
            version = new_version(host)
            ref = _reference_outputs(self.case.spec, apply_version(host, version), self.case.params)
            arrays = {f"pos__{k}": p for k, (p, _) in version.changes.items()}
            arrays |= {f"val__{k}": v for k, (_, v) in version.changes.items()}
            return arrays | {f"ref__{k}": np.asarray(r) for k, r in ref.items()}

        arrays = self._shared_version(s, make)
        changes = {k[5:]: (np.asarray(a), np.asarray(arrays[f"val__{k[5:]}"])) for k, a in arrays.items()
                   if k.startswith("pos__")}
        return Version(changes, shared_reference={k[5:]: a for k, a in arrays.items() if k.startswith("ref__")})

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

    def _put(self, s: int, old: Version | None, new: Version | None) -> None:
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
            if (s, name) not in self._replaced and write_in_place(device[name], pos, target):
                continue
            full = apply_version(host, new)[name]
            if (s, name) not in self._replaced and set_whole(device[name], full):
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

    def _version(self, s: int, v: int | None) -> Version | None:
        return None if v is None else self._versions(s)[v]

    def _host_inputs(self, s: int, v: int | None) -> Arrays:
        """Set ``s``'s host inputs in version ``v`` (a copy is made only where the spec compares with inputs)."""
        if self.case.spec.compare is None:
            return dict(self.sets[s][1])
        return apply_version(self.sets[s][1], self._version(s, v))

    def _reference(self, s: int, v: int | None) -> Arrays:
        """Set ``s``'s float64 reference in version ``v`` (None: unchanged). An unchanged set's comes from the
        caller where it has one; a changed version's is computed when an audit needs it and kept (sealed) only
        where the spec's own compare needs it at every audit: the lean check uses the version's compare copy,
        so a full reference is needed again only to word a failure."""
        if v is None:
            known = self._reference_of(s) if self._reference_of is not None else None
            if known is not None:  # the caller's copy: no second one kept here
                return dict(known)
            if s not in self._original_refs:
                self._original_refs[s] = seal(_reference_outputs(self.case.spec, self.sets[s][1], self.case.params))
            return unseal(self._original_refs[s])
        version = self._version(s, v)
        assert version is not None
        if version.shared_reference is not None:
            return dict(version.shared_reference)
        if version.reference is not None:
            return unseal(version.reference)
        ref = _reference_outputs(self.case.spec, apply_version(self.sets[s][1], version), self.case.params)
        if self.case.spec.compare is not None:  # every audit of such a spec compares with the full reference
            version.reference = seal(ref)
        return ref

    def _expected(self, s: int, v: int | None) -> dict[str, Expected]:
        if v is None:
            if s not in self._original_expected:
                self._original_expected[s] = expected_from(self._reference(s, None), self.case.dtype)
            return self._original_expected[s]
        version = self._version(s, v)
        assert version is not None
        if version.expected is None:
            version.expected = expected_from(self._reference(s, v), self.case.dtype)
        return version.expected

    def _close(self, got: Mapping[str, np.ndarray], expected: Mapping[str, Expected]) -> bool:
        """The lean check of an audited output: every output present, of its shape, within the tolerance of
        its reference (relative to the reference's magnitude; NaN fails). A failure is checked again in full
        (:func:`workbench.measure.case.check`) for its message."""
        tol = self.case.spec.tolerance(self.case.dtype, self.case.params)
        for name, e in expected.items():
            out = got.get(name)
            ref = unseal({name: e.ref})[name]
            if out is None or np.shape(out) != ref.shape:
                return False
            if ref.size and not float(np.max(np.abs(np.asarray(out, ref.dtype) - ref))) / e.scale <= tol:
                return False
        return True

    def _passes(self, got: Arrays, ref: Arrays, host: Arrays) -> bool:
        return _check_outputs(self.case.spec, got, ref, self.case.dtype, host, self.case.params).passed

    def _diagnose(self, s: int, got: Arrays, ref: Arrays) -> tuple[str, str]:
        """What the wrong output looks like, and the class that explains it."""
        for waited in range(1, LATE_POLLS + 1):
            time.sleep(LATE_WAIT_S)
            later = self._host(self._result) if self._result is not None else None
            if later is not None and not all(k in later and same_bits(v, later[k]) for k, v in got.items()):
                right = " (and right then)" if self._passes(later, ref, self._host_inputs(s, self._now.get(s))) else ""
                return (f"the output was still being written {waited * LATE_WAIT_S * 1e3:.0f} ms after the call "
                        f"returned{right}", FINISHES_LATER)
        if self._before and all(k in got and same_bits(got[k].reshape(-1)[pos], held)
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

    def _host(self, outputs: Mapping[str, Any], copy: bool = True) -> Arrays:
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


for _m in ("workbench.backends.base", "workbench.judge.stats", "workbench.measure.case"):
    importlib.import_module(_m)
GUARD.snapshot()  # the harness's functions as first seen, before any kernel is built

"""One cell of a sweep, measured from start to finish, with every failure turned into a status.

A cell is (kernel, variant, backend, dtype, params, mode, cache). :func:`measure`
takes a :class:`~workbench.measure.request.CellRequest` and never raises for a
problem of the cell itself; it returns a :class:`~workbench.measure.result.CellResult`
whose status is ok / incorrect / unsupported / oom / error / timeout.

Verification comes first: a variant that fails it is recorded as ``incorrect``
with its error and is not timed (the time of a wrong answer is not a result).
The output is verified again after timing, on freshly poisoned buffers; a
failure there keeps the timings but marks the row ``incorrect``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import secrets
import threading
import time
import traceback as tb
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from workbench.backends import registry as backend_registry
from workbench.backends.base import Backend
from workbench.catalog import registry as catalog
from workbench.catalog.spec import KernelSpec, Unsupported
from workbench.core.conditions import ConditionsMeter, GpuMonitor, probe_gpu_monitor, take_reading
from workbench.core.dtypes import itemsize
from workbench.core.record import canonical_params
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.execution import row_stats
from workbench.measure.audit import (
    AuditFailed,
    Auditor,
    explain_failure,
    implausible_reason,
    judge_reported,
    precision_settings,
    reduced_precision,
    reset_persisting_l2,
)
from workbench.measure.case import Case, CheckResult, make_host_inputs, output_dtype, reference_outputs
from workbench.measure.first_call_watch import FirstCallWatch
from workbench.measure.memory import peak_memory
from workbench.measure.request import (
    BUILD_TIMEOUT_S,
    FIRST_CALL_FACTOR,
    FIRST_CALL_FLOOR_S,
    FIRST_CALL_SHARE,
    Cell,
    CellRequest,
    CheckOnly,
    RoundRole,
)
from workbench.measure.result import CellResult, Memory, Rates
from workbench.measure.rounds import finish_single_round
from workbench.measure.timer import (
    Cancelled,
    Partner,
    PartnerFailed,
    TimingConfig,
    exercise,
    time_calls,
    timer_overhead,
)
from workbench.measure.worker import CellWorker, WorkerTimeout
from workbench.roofs.throughput import Peaks, published_ceilings, rates, work

log = logging.getLogger(__name__)

#: Rotation input sets are dropped to one when they would take more than this share of device memory.
ROTATION_MEMORY_SHARE = 0.25


class CellTimeout(Exception):
    """The cell ran past its deadline (the message says which limit)."""


#: Host inputs and references an :class:`InputCache` keeps across groups (rounds revisit every group).
INPUT_CACHE_BYTES = 1 << 30


class InputCache:
    """Host inputs and references shared by the cells of one (kernel, params, dtype) group.

    Seeded generation of large inputs and their float64 reference can cost more
    than timing the kernel; a sweep visits each group with every variant and
    backend in turn, and once per round, so they are made once per group. Groups
    are kept, least recently used dropped first, while they take at most
    ``max_bytes`` (the current group is always kept). Host arrays are never
    handed to a kernel (devices get copies), so sharing them is safe.
    """

    def __init__(self, max_bytes: int = INPUT_CACHE_BYTES, shared: SharedArrays | None = None) -> None:
        self._lock = threading.RLock()
        self.max_bytes = max_bytes
        #: Arrays other processes of the same sweep made already (worker processes of other backends).
        self.shared = shared
        self._group: tuple[Any, ...] | None = None
        self._inputs: dict[int, dict[str, np.ndarray]] = {}
        self._refs: dict[int, dict[str, np.ndarray]] = {}
        #: group -> (inputs by seed, references by seed), most recently used last
        self._groups: dict[tuple[Any, ...], tuple[dict, dict]] = {}

    @staticmethod
    def _nbytes(entry: tuple[dict, dict]) -> int:
        return sum(int(a.nbytes) for d in entry for arrays in d.values() for a in arrays.values()
                   if hasattr(a, "nbytes"))

    def _enter(self, spec: KernelSpec, params: dict[str, int], dtype: str) -> None:
        group = (id(spec), spec.name, canonical_params(params), dtype)
        if group == self._group:
            return
        entry = self._groups.pop(group, None) or ({}, {})
        self._groups[group] = entry
        self._group, self._inputs, self._refs = group, entry[0], entry[1]

    def _evict(self) -> None:
        """Drop the least recently used groups until the rest fit (the current group always stays)."""
        total = sum(self._nbytes(e) for e in self._groups.values())
        for g in list(self._groups):
            if total <= self.max_bytes or g == self._group:
                break
            total -= self._nbytes(self._groups.pop(g))

    def host_inputs(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int) -> dict[str, np.ndarray]:
        with self._lock:
            self._enter(spec, params, dtype)
            if seed not in self._inputs:
                self._inputs[seed] = self._made("inputs", spec, params, dtype, seed,
                                                lambda: make_host_inputs(spec, params, dtype, seed))
                self._evict()
            return self._inputs[seed]

    def reference(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int) -> dict[str, np.ndarray]:
        with self._lock:
            host = self.host_inputs(spec, params, dtype, seed)
            if seed not in self._refs:
                self._refs[seed] = self._made("reference", spec, params, dtype, seed,
                                              lambda: reference_outputs(spec, host, params))
                self._evict()
            return self._refs[seed]

    def version(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int,
                make: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """The audits' changed version of the input set of ``seed`` (``make()`` makes it, with its
        reference): kept with the group like its reference, and shared with the sweep's other processes."""
        with self._lock:
            self._enter(spec, params, dtype)
            key = ("version", seed)
            if key not in self._refs:
                self._refs[key] = self._made("version", spec, params, dtype, seed, make)
                self._evict()
            return self._refs[key]

    def _made(self, kind: str, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int,
              make: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """``make()``, or the same arrays from :attr:`shared` when another process of the sweep made them. The
        process that makes them keeps the shared copy too, not its own: every worker then maps the same pages
        (one copy in memory, not one more in the maker)."""
        if self.shared is None:
            return make()
        key = (kind, spec.name, canonical_params(params), dtype, seed)
        found = self.shared.get(key)
        if found is None:
            found = make()
            self.shared.put(key, found)
            found = self.shared.get(key) or found  # not shared (the folder full): this process's own
        return found


class SharedArrays:
    """Named arrays in a folder that every worker process of one sweep sees (``/dev/shm`` where it exists):
    the seeded inputs and float64 references of a group are made once, not once per backend's worker.

    Each entry is a folder of ``.npy`` files, written under a temporary name and renamed into place, so a
    reader sees it whole or not at all; readers map the files copy-on-write (never writing the shared
    pages). The folder holds at most ``max_bytes``: a new entry removes the least recently used ones (a
    process that mapped them keeps its pages; one that looks them up later makes its own). A quick suite
    filled 1 GiB a third of the way through, and every later group's inputs and references were then made
    once per backend's worker (17% of the workers' time was making inputs and references).
    """

    #: A put scans the folder (a stat per file) only when its own count says it may be full, when it adds a
    #: large entry, or when the last scan is this old: a verify's hundreds of small entries, each scanning all
    #: the others, spent 16% of its workers' time in stat.
    RESCAN_S = 0.5

    def __init__(self, root: str | Path, max_bytes: int = 1 << 30) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._used, self._scanned_at = 0, -math.inf

    def _dir(self, key: tuple[Any, ...]) -> Path:
        import hashlib

        return self.root / hashlib.sha1(repr(key).encode()).hexdigest()[:24]

    def get(self, key: tuple[Any, ...]) -> dict[str, np.ndarray] | None:
        d = self._dir(key)
        if not d.is_dir():
            return None
        try:
            found = {f.stem: np.load(f, mmap_mode="c") for f in sorted(d.glob("*.npy"))}
            os.utime(d)  # used now: the last to be removed
            return found
        except (OSError, ValueError) as exc:
            log.debug("shared arrays %s unreadable: %s", d, exc)
            return None

    def put(self, key: tuple[Any, ...], arrays: dict[str, np.ndarray]) -> None:
        import os
        import shutil
        import tempfile

        nbytes = sum(int(getattr(a, "nbytes", 0)) for a in arrays.values())
        try:
            if nbytes > self.max_bytes or any(a.dtype == object for a in arrays.values()):
                return
            self._make_room(nbytes)
            tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=".tmp-"))
            for name, a in arrays.items():
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)
            try:
                os.rename(tmp, self._dir(key))
            except OSError:  # another process put it first
                shutil.rmtree(tmp, ignore_errors=True)
        except (OSError, ValueError) as exc:  # a full /dev/shm: each process makes its own
            log.debug("cannot share arrays in %s: %s", self.root, exc)

    def _make_room(self, nbytes: int) -> None:
        """Remove the least recently used entries until ``nbytes`` more fit in :attr:`max_bytes`."""
        import shutil

        now = time.monotonic()
        if (self._used + nbytes <= self.max_bytes and nbytes < self.max_bytes // 64
                and now - self._scanned_at < self.RESCAN_S):
            self._used += nbytes
            return
        entries = []
        for d in self.root.iterdir():
            if d.name.startswith(".tmp-") or not d.is_dir():
                continue
            try:
                entries.append((d.stat().st_mtime, sum(f.stat().st_size for f in d.glob("*.npy")), d))
            except OSError:  # removed by another process meanwhile
                continue
        used = sum(size for _, size, _ in entries)
        for _, size, d in sorted(entries, key=lambda e: e[0]):
            if used + nbytes <= self.max_bytes:
                break
            shutil.rmtree(d, ignore_errors=True)
            used -= size
        self._used, self._scanned_at = used + nbytes, now


class SharedInputCase(Case):
    """A :class:`Case` whose seeded inputs and reference come from an :class:`InputCache`."""

    def __init__(self, spec: KernelSpec, variant: Any, backend: Backend, params: dict[str, int], dtype: str,
                 seed: int, cache: InputCache):
        self._cache = cache
        super().__init__(spec, variant, backend, params, dtype, seed)

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.host_inputs = self._cache.host_inputs(self.spec, self.params, self.dtype, seed)
        self.reference = self._cache.reference(self.spec, self.params, self.dtype, seed)
        self.inputs = self.device_inputs(self.host_inputs)


def rotation_inputs(case: Case, n: int, seed: int, cache: InputCache | None) -> list[dict[str, Any]]:
    """``n`` device input sets: the case's own and ``n - 1`` alternates (``Case.alternate_inputs``,
    or the same arrays from ``cache`` when a sweep shares them between cells)."""
    return [device for device, _ in rotation_sets(case, n, seed, cache)]


def rotation_sets(case: Case, n: int, seed: int, cache: InputCache | None
                  ) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
    """``n`` input sets as (device inputs, host inputs): the case's own, then those of seeds
    ``seed + 1 ..`` (from ``cache`` when a sweep shares them between cells)."""
    sets = [(case.inputs, case.host_inputs)]
    for i in range(1, n):
        host = (make_host_inputs(case.spec, case.params, case.dtype, seed + i) if cache is None
                else cache.host_inputs(case.spec, case.params, case.dtype, seed + i))
        sets.append((case.device_inputs(host), host))
    return sets


def set_reference(case: Case, i: int, seed: int, cache: InputCache | None) -> dict[str, np.ndarray] | None:
    """Rotated input set ``i``'s float64 reference where it is made already: the case's own for set 0, the
    input cache's for the others (None without a cache: the caller computes it)."""
    if i == 0:
        return case.reference
    return None if cache is None else cache.reference(case.spec, case.params, case.dtype, seed + i)


def identical_sets(hosts: list[dict[str, np.ndarray]]) -> list[tuple[int, int]]:
    """Pairs of rotated input sets with the same contents (a replayed answer would pass on them). Compared
    byte for byte, which stops at the first difference: hashing every set with blake2b was 5% of a quick
    suite's cell time (two 32 MiB sets a first visit)."""
    def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
        return a.keys() == b.keys() and all(_same_contents(a[k], b[k]) for k in a)

    return [(i, j) for i in range(len(hosts)) for j in range(i + 1, len(hosts)) if same(hosts[i], hosts[j])]


def _same_contents(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.size == 0:
        return True
    x, y = np.ascontiguousarray(a).reshape(-1).view(np.uint8), np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    step = 1 << 20  # chunks, so that sets that differ (all real ones) stop after the first
    return all(np.array_equal(x[i:i + step], y[i:i + step]) for i in range(0, len(x), step))


def check_rotations(case: Case, sets: list[tuple[dict[str, Any], dict[str, np.ndarray]]], seed: int,
                    cache: InputCache | None) -> tuple[CheckResult, int]:
    """Check the output of every rotated input set against its own reference (a kernel that replays the
    answer of one set fails on the others); returns the first failure, else the worst result, and the
    index of that set."""
    worst, worst_i = None, 0
    for i, (device, host) in enumerate(sets):
        ref = set_reference(case, i, seed, cache)
        ref = reference_outputs(case.spec, host, case.params) if ref is None else ref
        res = case.run_and_check(device, host, ref)
        if not res.passed:
            return res, i
        if worst is None or res.max_error > worst.max_error:
            worst, worst_i = res, i
    assert worst is not None
    return worst, worst_i


_device_infos: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_info(backend: Backend) -> Any:
    """``backend.device_info()``, asked once per backend object: some backends query libraries every time
    (numpy's BLAS through threadpoolctl: ~10 ms), and a sweep with rounds asks at every visit."""
    try:
        info = _device_infos.get(backend)
    except TypeError:  # an unhashable backend: ask it every time
        return backend.device_info()
    if info is None:
        info = backend.device_info()
        try:
            _device_infos[backend] = info
        except TypeError:
            pass
    return info


def _rotation_count(case: Case, wanted: int) -> tuple[int, str]:
    if wanted <= 1:
        return 1, ""
    total = device_info(case.backend).total_memory_bytes
    nbytes = sum(v.nbytes for v in case.host_inputs.values())
    if total and wanted * nbytes > ROTATION_MEMORY_SHARE * total:
        return 1, f"inputs not rotated: {wanted} sets of {nbytes / 2**20:.0f} MiB would crowd device memory"
    return wanted, ""


#: What out-of-memory errors say, lower-cased: numpy ("Unable to allocate 8.00 EiB for an array ..."), torch
#: CPU ("DefaultCPUAllocator: can't allocate memory"), torch CUDA / cupy ("out of memory"), pyopencl
#: (MEM_OBJECT_ALLOCATION_FAILURE, OUT_OF_RESOURCES, OUT_OF_HOST_MEMORY).
OOM_TEXTS = ("out of memory", "unable to allocate", "can't allocate memory", "cannot allocate memory",
             "mem_object_allocation_failure", "out_of_resources", "out_of_host_memory",
             "failed to allocate memory")


def is_oom(exc: BaseException) -> bool:
    """MemoryError, torch/cupy OutOfMemoryError (matched by name: neither is imported here), and errors of
    any runtime whose text says it ran out of memory (:data:`OOM_TEXTS`: torch CPU's RuntimeError,
    pyopencl's MemoryError / RuntimeError / LogicError with an allocation-failure code)."""
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"MemoryError", "OutOfMemoryError"}:
        return True
    runtime_error = isinstance(exc, RuntimeError) or bool(names & {"RuntimeError", "LogicError"}) or any(
        (c.__module__ or "").startswith("pyopencl") for c in type(exc).__mro__)
    if not runtime_error:
        return False
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(t in text for t in OOM_TEXTS)


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


def _deadline_check(deadline: float, cancel: threading.Event | None, what: str, limit_s: float | None = None
                    ) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled")
    if time.perf_counter() > deadline:
        raise CellTimeout(f"timed out {what}" + (f" (limit {limit_s:g} s)" if limit_s is not None else ""))


def _catalog_facts(cell: Cell) -> dict[str, Any]:
    """What analysis needs from the catalog (library baseline? memory- or compute-bound?), kept with the
    result so that stored rows are judged by themselves, on any machine."""
    try:
        spec = catalog.get_kernel(cell.kernel)
    except ValueError:
        return {}
    v = catalog.variants(cell.kernel).get(cell.variant)
    return {"bound": spec.bound, "library": bool(v is not None and v.library)}


def new_result(cell: Cell, seed: int | None = None) -> CellResult:
    """A result with the cell's identity and catalog facts, started now."""
    return CellResult(cell=cell, seed=seed, started_at=now_iso(), **_catalog_facts(cell))


def failed_result(cell: Cell, status: Status, message: str, *, seed: int, started: float,
                  traceback: str | None = None) -> CellResult:
    """The result of a cell that ended without running to completion (its worker died or timed out, its kernel
    could not be rebuilt): identity, status and message, and the wall time since ``started``."""
    res = new_result(cell, seed)
    res.end(status, message, traceback=traceback)
    res.finished_at, res.wall_s = now_iso(), time.perf_counter() - started
    return res


def measure(request: CellRequest, *, cancel: threading.Event | None = None, inputs: InputCache | None = None,
            limits: Limits | None = None) -> CellResult:
    """Measure (or with :class:`CheckOnly`, only verify) one cell in the calling thread. Never raises for a
    problem of the cell itself: every failure is a status.

    The request's role says what a round does (:class:`RoundRole`): a later round only warms up, times and,
    in the cell's last round, checks the output after timing; the first call, the check before timing and
    peak memory are left to the first round (:func:`workbench.measure.rounds.merge_rounds` keeps them).
    Building the case has its own limit, ``build_timeout_s``; ``timeout_s`` starts when the build is done.
    ``limits`` (from :func:`run_on_thread` or a worker process) shares those deadlines with the waiting side.
    """
    t_start = time.perf_counter()
    take_reading()  # a short cell's CPU window may start here, not where this process last measured
    if limits is None:
        limits = Limits.starting_now(request.build_timeout_s, request.timeout_s)
    res = new_result(request.cell, request.first_seed)
    try:
        _measure(request, res, limits=limits, cancel=cancel, inputs=inputs)
    except Cancelled:
        raise
    except Unsupported as exc:
        res.end(Status.UNSUPPORTED, str(exc))
    except AuditFailed as exc:
        res.end(Status.INCORRECT, str(exc))
    except CellTimeout as exc:
        res.end(Status.TIMEOUT, str(exc))
    except BaseException as exc:  # noqa: BLE001 - a variant's failure is a result, whatever it raised
        if isinstance(exc, KeyboardInterrupt):
            raise
        if is_oom(exc):
            res.end(Status.OOM, f"{type(exc).__name__}: {exc}")
        else:
            res.end(Status.ERROR, f"{type(exc).__name__}: {exc}", traceback=tb.format_exc())
    if res.exec_cache is None:
        _execution_cache_facts(request.cell, res)
    res.finished_at, res.wall_s = now_iso(), time.perf_counter() - t_start
    return res


def _measure(request: CellRequest, res: CellResult, *, limits: Limits, cancel: threading.Event | None,
             inputs: InputCache | None) -> None:
    """Build the cell's case, then check it only or time it."""
    cell, seed = request.cell, request.first_seed
    spec = catalog.get_kernel(cell.kernel)
    backend: Backend = backend_registry.get(cell.backend)
    res.runtime = backend.runtime
    params = spec.validate_params(cell.params_dict)
    flops, nbytes = work(spec, params, cell.dtype)
    res.rates = Rates(flops=flops, bytes=nbytes, intensity=flops / nbytes if nbytes else None)
    probe = backend.probe()
    if not probe.available:
        raise Unsupported(f"backend {backend.name!r} is unavailable: {probe.reason}")
    res.device = device_info(backend).name
    if cell.unsupported:
        raise Unsupported(cell.unsupported)
    variant = catalog.get_variant(cell.kernel, cell.variant)
    # an ad-hoc callable names the runtime its own code runs on (numba code given numpy arrays is numba)
    res.runtime = getattr(variant.build, "code_runtime", None) or backend.runtime

    t = time.perf_counter()
    case = (Case(spec, variant, backend, params, cell.dtype, seed=seed) if inputs is None
            else SharedInputCase(spec, variant, backend, params, cell.dtype, seed, inputs))
    res.setup_s = time.perf_counter() - t
    _deadline_check(limits.build_deadline, cancel,
                    f"while building the variant and its inputs (build limit {limits.build_s:g} s)")
    deadline = limits.start_run()
    if isinstance(request.what, CheckOnly):
        _check_only(case, request.what.seeds, res, deadline, cancel, limits.run_s)
        _execution_cache_facts(request.cell, res)  # the checks' calls, before the audit exercise adds its own
        if res.status == Status.OK:  # calls the variant cannot tell from timed ones, audited
            exercise(case.backend.timer(), case, rotation_sets(case, 2, case.seed, inputs), deadline=deadline,
                     reference_of=lambda s: set_reference(case, s, case.seed, inputs),
                     shared_version=shared_versions(case, case.seed, inputs), cancel=cancel)
    else:
        clock = _Clock(deadline, limits.run_s, cancel, limits.first_call_done)
        _timed(request, request.what, case, backend, res, clock, inputs)


@dataclass(frozen=True)
class _Clock:
    """A cell's run deadline, its limit (for messages) and its cancel event, checked between steps."""

    deadline: float
    limit_s: float
    cancel: threading.Event | None

    #: Tells the waiting side the first call returned (:meth:`Limits.first_call_done`).
    first_call_done: Callable[[], None] | None = None

    def check(self, what: str) -> None:
        _deadline_check(self.deadline, self.cancel, what, self.limit_s)


def _timed(request: CellRequest, config: TimingConfig, case: Case, backend: Backend, res: CellResult,
           clock: _Clock, inputs: InputCache | None) -> None:
    """Time the built case (after the first call and the check, in a first round), then check it again."""
    cell, role, seed = request.cell, request.role, request.seed
    reset_persisting_l2(backend)  # no L2 lines pinned by an earlier cell (or this variant's last round)
    timer = backend.timer()
    res.timing.timer_kind = timer.kind
    res.timing.timer_overhead_s = timer_overhead(backend)
    if not role.later:
        ran = time.perf_counter()
        if not _first_call_passes(case, timer, res, clock):
            return
        config = warmup_left(config, time.perf_counter() - ran, backend.device_class)
    n_inputs, note = _rotation_count(case, config.n_inputs)
    res.note(note)
    other = _partner_case(request, inputs, res)
    sets, other_sets = _timing_arrays(case, other, n_inputs, seed, inputs)
    same = [] if role.later else identical_sets([host for _, host in sets])  # the first round says so
    if same:
        res.note("rotated input sets " + ", ".join(f"{i} and {j}" for i, j in same)
                 + " are identical: a replayed answer would pass on them")
    out = case.outputs
    calls = [(lambda inp=inp: case.call(inp, out)) for inp, _ in sets]
    res.timing.n_inputs = len(sets)
    clock.check("while preparing rotation inputs")

    flush = backend.flush_cache if config.cache == "cold" else None
    partner = None if other is None else _partner(other, other_sets, calls, request, inputs, res, clock)
    meter = ConditionsMeter(gpu_monitor(backend))
    meter.start()
    try:
        how = {"flush": flush, "deadline": clock.deadline, "cancel": clock.cancel, "sync": backend.synchronize}
        try:
            timing = time_calls(timer, calls, config, audit=_audit(case, sets, seed, inputs, config), **how,
                                partner=partner)
        except PartnerFailed as exc:  # the baseline's fault: the cell is timed alone
            res.note(f"its baseline was not timed beside it: {type(exc.__cause__).__name__}: {exc.__cause__}")
            partner = None
            timing = time_calls(timer, calls, config, audit=_audit(case, sets, seed, inputs, config), **how)
    finally:
        res.conditions = meter.stop()
    del calls
    if partner is not None and request.partner is not None:
        if timing.partner_failure:
            res.note(f"its baseline timed beside it failed an audit: {timing.partner_failure}")
        else:
            res.pair_with, res.pair_log_ratios = request.partner.key, list(timing.pair_log_ratios)
    st = res.timing.take(timing)
    res.rates = Rates(**rates(res.rates.flops or 0.0, res.rates.bytes or 0.0, st.median, cell.dtype,
                              request.ceilings, published_ceilings(res.device, cell.dtype), case.spec.bound))
    if timing.stopped_by == "deadline" and st.n < config.min_samples:
        raise CellTimeout(f"timed out after {st.n} of {config.min_samples} samples (limit {clock.limit_s:g} s)")

    chosen = tuned_config(case.call)
    if chosen:
        res.tuned_config = chosen
        res.note(f"autotune chose {chosen}")
    # a failed audit has the outputs of every rotated set checked too, whatever the round
    if (role.check_after or timing.audit_failure) and not _checked_after(case, sets, seed, inputs, res):
        res.note(timing.audit_failure)
        return
    if timing.audit_failure:
        res.end(Status.INCORRECT, timing.audit_failure)
        return
    del sets
    if not role.later:
        res.memory = Memory(*peak_memory(backend, case.run, _resident_bytes(case, cell.dtype)))
        if timing.stopped_by != "spread":
            res.note(f"spread {st.rel_spread:.3f} above target {config.target_spread:g} "
                     f"(stopped by {timing.stopped_by})")
    _end_timed(res, cell.dtype, request.ceilings)


def _audit(case: Case, sets: list[tuple[dict[str, Any], dict[str, np.ndarray]]], seed: int,
           inputs: InputCache | None, config: TimingConfig) -> Auditor:
    """The audit of a timing loop over ``sets``, with the references the input cache holds already and the
    sweep's shared versions of each set (:meth:`InputCache.version`)."""
    return Auditor(case, sets, case.outputs, min_samples=config.min_samples,
                   reference_of=lambda s: set_reference(case, s, seed, inputs),
                   shared_version=shared_versions(case, seed, inputs))


def shared_versions(case: Case, seed: int, inputs: InputCache | None
                    ) -> Callable[[int, Callable[[], dict[str, np.ndarray]]], dict[str, np.ndarray]] | None:
    """Rotated set ``s``'s audit version from the input cache (None without one: each auditor draws its own)."""
    if inputs is None:
        return None
    return lambda s, make: inputs.version(case.spec, case.params, case.dtype, seed + s, make)


def _partner_case(request: CellRequest, inputs: InputCache | None, res: CellResult) -> Case | None:
    """The baseline to time beside the cell (:attr:`CellRequest.partner`), built on the same seeded inputs; None
    (with a note) when none is asked for or it cannot be built (the baseline's fault: the cell is timed alone)."""
    p = request.partner
    if p is None:
        return None
    try:
        spec, backend = catalog.get_kernel(p.kernel), backend_registry.get(p.backend)
        variant = catalog.get_variant(p.kernel, p.variant)
        params = spec.validate_params(p.params_dict)
        return (Case(spec, variant, backend, params, p.dtype, seed=request.seed) if inputs is None
                else SharedInputCase(spec, variant, backend, params, p.dtype, request.seed, inputs))
    except (CellTimeout, Cancelled):
        raise
    except Exception as exc:  # noqa: BLE001
        res.note(f"its baseline {p.variant} was not timed beside it: {type(exc).__name__}: {exc}")
        return None


def _timing_arrays(case: Case, other: Case | None, n: int, seed: int, inputs: InputCache | None
                   ) -> tuple[list[tuple[dict[str, Any], dict[str, np.ndarray]]],
                              list[tuple[dict[str, Any], dict[str, np.ndarray]]] | None]:
    """The rotated input sets of the cell (and of the partner, when there is one). Side by side, both sides'
    device inputs and outputs are made afresh here, in a random order: arrays made earlier or later land
    differently in memory and caches, and with the cell's made first every visit one side was 3-10% faster
    than the other running the very same code (an A/A pair, 4 MiB arrays, tests/perf/power.py)."""
    if other is None:
        return rotation_sets(case, n, seed, inputs), None
    made = {}
    for x in (case, other) if secrets.randbits(1) else (other, case):
        x.poison()
        x.inputs = x.device_inputs(x.host_inputs)
        made[id(x)] = rotation_sets(x, n, seed, inputs)
    return made[id(case)], made[id(other)]


def _partner(other: Case, sets: list[tuple[dict[str, Any], dict[str, np.ndarray]]],
             cell_calls: list[Callable[[], Any]], request: CellRequest, inputs: InputCache | None,
             res: CellResult, clock: _Clock) -> Partner | None:
    """The partner's calls and audit, after one untimed call of each side (the partner's may compile; the
    cell's keeps the two alike); None (with a note) when its first call fails."""
    out = other.outputs
    calls = [(lambda inp=inp: other.call(inp, out)) for inp, _ in sets]
    try:
        calls[0]()
        other.backend.synchronize()
    except Exception as exc:  # noqa: BLE001 - the baseline's fault: the cell is timed alone
        name = request.partner.variant if request.partner is not None else "?"
        res.note(f"its baseline {name} was not timed beside it: {type(exc).__name__}: {exc}")
        return None
    cell_calls[0]()
    other.backend.synchronize()
    clock.check("while preparing its baseline to time beside it")
    config = request.what if isinstance(request.what, TimingConfig) else TimingConfig()
    return Partner(calls, _audit(other, sets, request.seed, inputs, config))


def _end_timed(res: CellResult, dtype: str, ceilings: Peaks | None) -> None:
    """A timed cell that passed every check: the precision settings in force recorded (in the row's extra),
    and ``implausible`` when its rate is beyond the device (its peak note then explains nothing away)."""
    settings = precision_settings()
    if settings:
        res.placement["precision"] = json.dumps(settings, sort_keys=True)
        res.note(reduced_precision(settings, dtype))
    why = implausible_reason({**vars(res.rates), "dtype": dtype, "precision": settings},
                             getattr(ceilings, "roof_set", None))
    if why:
        res.rates.peak_note = None
        res.end(Status.IMPLAUSIBLE, why)
        return
    res.end(Status.OK)


def warmup_left(config: Any, ran_s: float, device_class: str) -> Any:
    """The timing config with the warm-up still owed after a first call and check that took ``ran_s``.

    On a CPU they warmed the processor (the kernel, and the reference on the same cores): their time counts
    towards the warm-up (one numpy cell through the CLI warmed up for 0.1 s after 20 ms of calls; the warm-up
    still makes a call). A GPU sat idle through the CPU reference, and a first call's compile warms nothing:
    credited there, round 1 of 28 of 65 GPU cells on an H100 read over 1.3x the later rounds (8 of 65 on an
    H200 without the credit), so a GPU warms up in full."""
    if isinstance(config, TimingConfig) and config.warmup_s > 0 and device_class == "cpu":
        return dataclasses.replace(config, warmup_s=max(0.0, config.warmup_s - ran_s))
    return config


def _first_call_passes(case: Case, timer: Any, res: CellResult, clock: _Clock) -> bool:
    """A first round's first call (timed alone: compilation, lazy set-up) and the check before timing; a
    failed check ends the cell ``incorrect``, untimed (the time of a wrong answer is not a result)."""
    res.timing.first_call_s = timer.measure(case.run).device_s
    if clock.first_call_done is not None:
        clock.first_call_done()
    clock.check("in the first call")
    check = case.run_and_check()
    res.max_error, res.tolerance = check.max_error, check.tolerance
    if not check.passed:
        res.end(Status.INCORRECT, f"verification failed (not timed): {check.message}{explain_failure(case, check)}")
        return False
    clock.check("during verification")
    return True


def _checked_after(case: Case, sets: list[tuple[dict[str, Any], dict[str, np.ndarray]]], seed: int,
                   inputs: InputCache | None, res: CellResult) -> bool:
    """The outputs of every rotated input set checked after timing; a failure keeps the timings but ends the
    cell ``incorrect``."""
    after, which = check_rotations(case, sets, seed, inputs)
    res.max_error = max(res.max_error if res.max_error is not None else -math.inf, after.max_error)
    res.tolerance = res.tolerance if res.tolerance is not None else after.tolerance
    if not after.passed:
        where = f" on rotated input set {which} (seed {seed + which})" if which else ""
        refs = [(i, host, reference_outputs(case.spec, host, case.params)) for i, (_, host) in enumerate(sets)]
        res.end(Status.INCORRECT, f"verification after timing failed{where}: {after.message}"
                + explain_failure(case, after, [r for r in refs if r[0] != which], own=refs[which][1:]))
        return False
    return True


def _resident_bytes(case: Case, dtype: str) -> int:
    """Bytes of the case's inputs and outputs (what a peak-memory reading is compared with)."""
    return sum(int(a.size) * itemsize(dtype) for a in case.host_inputs.values()) + sum(
        int(np.prod(shape)) * itemsize(output_dtype(case.spec, name, dtype)) for name, shape in case.out_shapes.items())


def _execution_cache_facts(cell: Cell, res: CellResult) -> None:
    """A block variant's execution-cache statistics (``exec_cache``, JSON) and, when its fused recording fell
    back to eager, a note saying so; nothing for variants that record nothing."""
    stats = row_stats(cell.kernel, cell.variant, cell.backend, cell.params_dict, cell.dtype)
    if stats is None:
        return
    res.exec_cache = json.dumps(stats, separators=(",", ":"))
    if stats["fallback"]:
        res.note(f"fused recording fell back to eager: {stats['fallback']}")


def tuned_config(call: Any) -> str | None:
    """The configuration an autotuned variant settled on, in words: a built call may expose it as
    ``best_config`` (a value or a callable, None until chosen), as Triton's ``triton.autotune`` does."""
    chosen = getattr(call, "best_config", None)
    if callable(chosen):
        chosen = chosen()
    if chosen is None:
        return None
    kwargs = getattr(chosen, "all_kwargs", None)  # a triton.Config: its block sizes, warps and stages
    if callable(kwargs):
        chosen = ", ".join(f"{k}={v}" for k, v in kwargs().items() if v is not None)
    return str(chosen)


def _check_only(case: Case, seeds: tuple[int, ...], res: CellResult, deadline: float,
                cancel: threading.Event | None, limit_s: float | None = None) -> None:
    worst, worst_seed = -1.0, seeds[0]
    earlier: list[tuple[int, dict[str, np.ndarray], dict[str, np.ndarray]]] = []  # a stale answer is named so
    for i, s in enumerate(seeds):
        if i:
            earlier.append((i - 1, case.host_inputs, case.reference))
            case.reseed(s)
        res.seed = s  # where an error or timeout struck
        check = case.run_and_check()
        if not check.passed:
            why = check.message or f"max error {check.max_error:.3g} > tolerance {check.tolerance:.3g}"
            res.end(Status.INCORRECT, why + explain_failure(case, check, earlier),
                    max_error=check.max_error, tolerance=check.tolerance)
            return
        if check.max_error > worst:
            worst, worst_seed = check.max_error, s
            res.max_error, res.tolerance = check.max_error, check.tolerance
        _deadline_check(deadline, cancel, "during verification", limit_s)
    res.end(Status.OK, seed=worst_seed)


_gpu_monitors: dict[str, GpuMonitor | None] = {}
_gpu_monitors_lock = threading.Lock()


def gpu_monitor(backend: Backend) -> GpuMonitor | None:
    """The GPU monitor (NVML, AMD SMI) of a CUDA / ROCm backend, probed once per backend; None for other
    backends, or when no monitor can read the device (the result's GPU fields then stay empty)."""
    platform = getattr(backend, "device_class", "cpu")
    if platform not in ("cuda", "rocm"):
        return None
    with _gpu_monitors_lock:
        if backend.name not in _gpu_monitors:
            mon, why = probe_gpu_monitor(platform, int(getattr(backend, "device_id", 0) or 0))
            if mon is None:
                log.info("no GPU monitor for %s: %s", backend.name, why)
            _gpu_monitors[backend.name] = mon
        return _gpu_monitors[backend.name]


def prepare_backend(name: str) -> str | None:
    """One-time costs of a backend — import and probe, device query, timer-overhead calibration —
    paid before its first cell so they never count against a cell's time limit. Returns a problem
    (the cells will report it themselves) or None."""
    try:
        backend = backend_registry.get(name)
        if not backend.probe().available:
            return backend.probe().reason
        device_info(backend)
        timer_overhead(backend)
    except Exception as exc:  # noqa: BLE001 - the cells of this backend will record the error
        return f"{type(exc).__name__}: {exc}"
    return None


def after_oom(res: CellResult, backend: str) -> None:
    """After an out-of-memory cell the backend frees its caches (a device memory pool), before the next."""
    try:
        backend_registry.get(backend).free_memory()
    except Exception as exc:  # noqa: BLE001 - freeing is best effort
        res.note(f"free_memory failed: {exc}")


def timeout_message(request: CellRequest, phase: str) -> str:
    """Why a cell that never came back was stopped, ``phase`` being where it was: "build", "first call", "run"."""
    if phase == "build":
        return f"the build did not finish within the {request.build_timeout_s:g} s build limit"
    if phase == "first call":
        return (f"its first call did not return within {request.first_call_limit_s:g} s (a first call may take "
                f"the longest of {FIRST_CALL_FLOOR_S:g} s, {FIRST_CALL_SHARE:.0%} of --timeout and "
                f"{FIRST_CALL_FACTOR:g}x the round's warm-up and budget; a larger --timeout gives it more)")
    return f"no result within the {request.timeout_s:g} s limit: a call never returned"


def run_on_thread(request: CellRequest, worker: CellWorker, inputs: InputCache | None = None) -> CellResult:
    """:func:`measure` on ``worker`` with a hard wall-time limit; a call that never returns becomes ``timeout``.

    The cell's own deadline (checked between calls) fires first; the hard limit
    adds a little grace so that a cell which stops by itself keeps its partial
    samples. The build (inputs, reference, compilation) has its own limit,
    ``build_timeout_s``, and the run limit starts after it. After an out-of-memory
    cell the backend frees its caches here, before the next cell starts.
    """
    t0 = time.perf_counter()
    timeout_s = request.timeout_s
    limits = Limits.of(request)
    grace = min(2.0, 0.1 * timeout_s + 0.2)
    first_grace = min(grace, 0.1 * request.first_call_limit_s + 0.2)
    try:
        res = worker.run(lambda cancel: measure(request, cancel=cancel, inputs=inputs, limits=limits),
                         timeout_s + grace, deadline=lambda: limits.hard_deadline(
                             first_grace if limits.in_first_call else grace))
    except WorkerTimeout:
        phase = ("first call" if limits.in_first_call else "run") if limits.run_deadline < math.inf else "build"
        res = failed_result(request.cell, Status.TIMEOUT, timeout_message(request, phase)
                            + "; its worker thread was abandoned", seed=request.seed, started=t0)
    res = judge_reported(res, time.perf_counter() - t0)
    if res.status is Status.OOM:
        after_oom(res, request.cell.backend)
    busy = worker.still_running_abandoned()
    if busy:
        res.note(f"{busy} abandoned timed-out cell(s) still running: this timing may be disturbed")
    return res


# -- row-returning entry points (tests, tuning, scripts): one cell's row, as a sweep would store it ----------
def run_cell(cell: Cell, config: TimingConfig | CheckOnly, *, seed: int = 0, timeout_s: float = math.inf,
             cancel: threading.Event | None = None, inputs: InputCache | None = None,
             peaks: Peaks | None = None, later_round: bool = False, check_after: bool = True,
             build_timeout_s: float = BUILD_TIMEOUT_S) -> dict[str, Any]:
    """:func:`measure` of one cell in the calling thread, as its row (without run_id / env_id)."""
    request = CellRequest(cell, config, RoundRole.of_flags(later_round, check_after), seed, timeout_s,
                          build_timeout_s, peaks)
    return finish_single_round(measure(request, cancel=cancel, inputs=inputs).to_row())


def execute_cell(cell: Cell, config: TimingConfig | CheckOnly, worker: CellWorker, *, timeout_s: float,
                 seed: int = 0, inputs: InputCache | None = None, peaks: Peaks | None = None,
                 later_round: bool = False, check_after: bool = True,
                 build_timeout_s: float = BUILD_TIMEOUT_S) -> dict[str, Any]:
    """:func:`run_on_thread` of one cell, as its row."""
    request = CellRequest(cell, config, RoundRole.of_flags(later_round, check_after), seed, timeout_s,
                          build_timeout_s, peaks)
    return finish_single_round(run_on_thread(request, worker, inputs).to_row())

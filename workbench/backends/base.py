"""The contract every backend adapter fulfils.

A backend is one runtime on one device (``numpy`` on the CPU, ``torch-cuda``,
``opencl-0`` ...). The harness, the verifier and the UI only ever talk to this
interface, so adding a runtime means writing one module of this shape, which
also declares what the other layers know of the runtime (``RUNTIMES``:
:class:`~workbench.backends.runtime.Runtime`).
"""

from __future__ import annotations

import gc
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from workbench.backends.memory import MemoryMeter, MemoryStats  # noqa: F401  (adapters import MemoryStats from here)
from workbench.core.dtypes import KNOWN_DTYPES  # noqa: F401  (capabilities pick from these; adapters import it here)
from workbench.core.record import JsonObject

#: Automatic-choice priority per device class (lower is preferred).
PRIORITY: dict[str, int] = {
    "cuda": 0,
    "rocm": 0,
    "xpu": 10,
    "mps": 20,
    "plugin": 30,
    "opencl-gpu": 40,
    "opencl-accelerator": 45,
    "cpu": 100,
}


class BackendUnavailable(RuntimeError, ValueError):
    """A backend that cannot run here was asked for: named in a request (nothing was run) or asked to do work.

    One class for both places it is raised: a RuntimeError where a backend is used, a ValueError where a
    request names it, so callers catching either (selection's bad input, a backend's failed ``require``)
    still catch it."""


class TimingModeUnavailable(RuntimeError):
    """A backend cannot time in the timing mode asked for (``kernel`` without CUPTI, ``graph`` without device
    graphs); the message says why, and :mod:`workbench.measure.timing_modes` falls back and says so."""


@dataclass(frozen=True)
class Probe:
    """Whether a backend can run here; ``reason`` says why not and how to fix it."""

    available: bool
    reason: str = ""

    @classmethod
    def ok(cls) -> Probe:
        return cls(True, "")

    @classmethod
    def missing(cls, reason: str) -> Probe:
        return cls(False, reason)


@dataclass
class DeviceInfo:
    name: str
    vendor: str = "unknown"
    kind: str = "cpu"  # cpu | gpu | accelerator
    total_memory_bytes: int | None = None
    compute_units: int | None = None
    clock_mhz: float | None = None
    last_level_cache_bytes: int | None = None
    versions: dict[str, str] = field(default_factory=dict)
    extra: JsonObject = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        return asdict(self)


@dataclass
class Capabilities:
    dtypes: tuple[str, ...] = ("float32", "float64")
    warp_size: int | None = None  # warp / wavefront / subgroup width
    shared_memory_per_block: int | None = None
    max_threads_per_block: int | None = None
    device_events: bool = False
    compiles_device_code: bool = False  # can run portable .cu kernels

    def to_dict(self) -> JsonObject:
        return asdict(self)


@dataclass(frozen=True)
class Sample:
    """One timed call: device time (events, or sync+clock) and host launch time."""

    device_s: float
    host_s: float


class Timer(ABC):
    """Times one call of a zero-argument function on a backend."""

    #: e.g. "cuda-event", "torch-event", "opencl-profiling", "sync+perf_counter"
    kind: ClassVar[str] = "sync+perf_counter"

    @abstractmethod
    def measure(self, fn: Callable[[], Any]) -> Sample: ...


class SyncWallTimer(Timer):
    """Synchronize, run, synchronize: the fallback where a runtime has no events."""

    kind = "sync+perf_counter"

    def __init__(self, synchronize: Callable[[], None]):
        self._sync = synchronize

    def measure(self, fn: Callable[[], Any]) -> Sample:
        self._sync()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        self._sync()
        t2 = time.perf_counter()
        return Sample(device_s=t2 - t0, host_s=t1 - t0)


class EventTimer(Timer):
    """Device events recorded on the current stream around the call: CUDA, HIP, torch devices alike.

    A runtime supplies its pieces: ``new_event`` (an object with ``record()``
    and ``synchronize()``), ``elapsed_s(start, end)``, ``synchronize`` for the
    device, and optionally ``scope`` (enter the device) and ``after`` (e.g. a
    memory meter's ``sample``, for runtimes whose allocator keeps no peak).
    """

    def __init__(self, kind: str, new_event: Callable[[], Any], elapsed_s: Callable[[Any, Any], float],
                 synchronize: Callable[[], None], scope: Callable[[], AbstractContextManager] = nullcontext,
                 after: Callable[[], None] = lambda: None):
        self.kind = kind
        self._new_event, self._elapsed_s, self._sync = new_event, elapsed_s, synchronize
        self._scope, self._after = scope, after

    def measure(self, fn: Callable[[], Any]) -> Sample:
        with self._scope():
            start, end = self._new_event(), self._new_event()
            self._sync()
            t0 = time.perf_counter()
            start.record()
            fn()
            end.record()
            t1 = time.perf_counter()
            end.synchronize()
        self._after()
        return Sample(device_s=self._elapsed_s(start, end), host_s=t1 - t0)


class Backend(ABC):
    """One runtime on one device. Subclasses must keep ``probe`` free of exceptions."""

    #: Unique, user-facing name (``numpy``, ``torch-cuda``, ``opencl-0``).
    name: str
    #: The runtime family; variants declare which runtimes they run on.
    runtime: str
    #: Key into :data:`PRIORITY` for automatic selection.
    device_class: str = "cpu"
    #: A stand-in whose times mean nothing and cost much (Triton's interpreter): sweeps that name no backends
    #: leave it out (``verify`` still checks it); name it (``--backends``) to time it anyway.
    timed_only_when_named: bool = False
    #: Environment variables this backend's worker process starts with (read before any runtime import,
    #: e.g. ``TRITON_INTERPRET=1`` for Triton's interpreter), on top of the parent's environment.
    worker_env: Mapping[str, str] = {}
    #: How this backend measures memory (:mod:`workbench.backends.memory`), chosen once. Adapters set it,
    #: or override :meth:`memory` and :meth:`reset_peak_memory`.
    meter: MemoryMeter

    # -- discovery -------------------------------------------------------
    def probe(self) -> Probe:
        """Never raises. Unavailable results name the missing package or driver.

        Cached per backend: probing imports a runtime and opens a device, which
        is done once, not on every ``available`` check.
        """
        cached = self.__dict__.get("_probe")
        if cached is None:
            cached = self._probe = self._probe_uncached()
        return cached

    def _probe_uncached(self) -> Probe:
        """The real probe behind :meth:`probe`; adapters implement this (or override ``probe``)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither probe() nor _probe_uncached()")

    @property
    def probed(self) -> bool:
        """Whether this process has probed the backend (an adapter overriding ``probe`` counts as probed).

        The environment record of a command lists these, so it describes what
        the command used without importing every other runtime.
        """
        return "_probe" in self.__dict__ or type(self).probe is not Backend.probe

    @property
    def available(self) -> bool:
        return self.probe().available

    def in_process_problem(self) -> str | None:
        """Why this backend's cells cannot run in this process right now (a runtime already set up another
        way here), or None. Worker processes start fresh with :attr:`worker_env` and never have one."""
        return None

    def require(self) -> None:
        p = self.probe()
        if not p.available:
            raise BackendUnavailable(f"backend {self.name!r} is unavailable: {p.reason}")

    @abstractmethod
    def device_info(self) -> DeviceInfo: ...

    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @property
    def priority(self) -> int:
        return PRIORITY.get(self.device_class, 100)

    # -- arrays ----------------------------------------------------------
    @abstractmethod
    def from_numpy(self, a: np.ndarray) -> Any: ...

    @abstractmethod
    def to_numpy(self, x: Any) -> np.ndarray: ...

    @abstractmethod
    def empty(self, shape: tuple[int, ...], dtype: str) -> Any: ...

    def full(self, shape: tuple[int, ...], dtype: str, value: float) -> Any:
        """Device array filled with ``value`` (used to poison outputs with NaN)."""
        host = np.full(shape, value, dtype=np.float32 if dtype == "bfloat16" else dtype)
        return self.from_numpy(host) if dtype != "bfloat16" else self.cast(self.from_numpy(host), dtype)

    def window(self, buf: Any, start: int, shape: tuple[int, ...]) -> Any | None:
        """The elements ``start .. start + prod(shape)`` of 1-D device array ``buf`` as an array of ``shape``
        that a kernel can take as its own output (writes past its ends land in ``buf``), or None where the
        runtime has no such view (the output then gets no guard zones)."""
        n = 1
        for d in shape:
            n *= int(d)
        return buf[start:start + n].reshape(shape)

    def cast(self, x: Any, dtype: str) -> Any:
        """Convert a device array to ``dtype`` (bfloat16 goes through here)."""
        raise NotImplementedError(f"{self.name} cannot cast to {dtype}")

    def adopt(self, a: np.ndarray) -> Any | None:
        """A device array sharing host array ``a``'s memory (no copy), or None where the device's memory is
        not the host's: how a sweep hands a CPU kernel arrays it placed itself (:mod:`workbench.core.placement`)."""
        return None

    def to_device(self, a: np.ndarray, dtype: str) -> Any:
        """A host array of run dtype ``dtype`` on the device: bfloat16 is held as float32 on the host and
        cast on the device. Integer inputs (``KernelSpec.input_dtypes``) keep their dtype."""
        x = self.from_numpy(np.ascontiguousarray(a))
        return self.cast(x, dtype) if dtype == "bfloat16" and np.asarray(a).dtype.kind == "f" else x

    # -- execution -------------------------------------------------------
    @abstractmethod
    def synchronize(self) -> None: ...

    def timer(self) -> Timer:
        return SyncWallTimer(self.synchronize)

    def mode_timer(self, mode: str) -> Timer:
        """A timer for timing mode ``kernel`` (the call's kernels, from activity records) or ``graph`` (replays
        of a captured device graph); raises :class:`TimingModeUnavailable` with the reason where it has none.
        :meth:`timer` is the ``launch`` (on a CPU: ``host``) timer."""
        raise TimingModeUnavailable(f"{self.name} records no {mode} times")

    # -- memory ----------------------------------------------------------
    def memory(self) -> MemoryStats:
        self.require()
        return self.meter.stats()

    def reset_peak_memory(self) -> None:
        self.require()
        self.meter.reset()

    def free_memory(self) -> None:
        """Release cached allocations (after an out-of-memory cell)."""
        gc.collect()

    # -- caches ----------------------------------------------------------
    def flush_size_bytes(self) -> int:
        """Bytes :meth:`flush_cache` writes: twice the last-level cache the device reports (FlashInfer flushes 2x
        the L2), 64 MiB where it reports none, at least 4 MiB."""
        llc = self.device_info().last_level_cache_bytes or 64 * 2**20
        return 4 * max(2 * llc // 4, 2**20)

    def flush_cache(self) -> None:
        """Evict the last-level cache by writing a buffer twice its size."""
        buf = getattr(self, "_flush_buffer", None)
        if buf is None:
            buf = self.from_numpy(np.zeros(self.flush_size_bytes() // 4, dtype=np.float32))
            self._flush_buffer = buf
        self._touch(buf)
        self.synchronize()

    def _touch(self, buf: Any) -> None:
        buf += 1  # works for every array type with an in-place add; a runtime without one overrides

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

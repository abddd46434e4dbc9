"""Memory meters: one small object per way of measuring memory, chosen once per backend.

A backend's ``memory()`` and ``reset_peak_memory()`` are its meter's
``stats()`` and ``reset()``. ``sample()`` notes the current usage for meters
whose runtime keeps no high-water mark: timers and allocations call it, so the
peak is the largest usage seen at those points.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from workbench.core.allocator import release_free_memory
from workbench.core.record import JsonObject


@dataclass(frozen=True)
class MemoryStats:
    """Current and peak bytes, and how they were measured."""

    current_bytes: int | None
    peak_bytes: int | None
    method: str  # e.g. "tracemalloc", "torch.cuda allocator", "opencl buffer accounting"

    def to_dict(self) -> JsonObject:
        return asdict(self)


class MemoryMeter:
    """Current and peak bytes of one backend, and the method that measured them."""

    method: str

    def stats(self) -> MemoryStats:
        raise NotImplementedError

    def reset(self) -> None:
        """Start a new peak from the current usage."""

    def sample(self) -> None:
        """Note the current usage (only meters without a runtime high-water mark need it)."""


class TracemallocMemory(MemoryMeter):
    """Peak memory of allocations Python can see (numpy registers its buffers with tracemalloc)."""

    method = "tracemalloc (python + numpy allocations)"

    def reset(self) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        tracemalloc.reset_peak()

    def stats(self) -> MemoryStats:
        """Traced bytes since ``reset``; without a reset, the process RSS (tracing is never left on)."""
        if not tracemalloc.is_tracing():
            return MemoryStats(_rss(), None, "psutil RSS (a tracemalloc peak needs reset_peak_memory() first)")
        cur, peak = tracemalloc.get_traced_memory()
        return MemoryStats(cur, peak, self.method)


class HighWaterMemory(MemoryMeter):
    """Process resident-set high-water mark, reset through /proc/self/clear_refs (Linux).

    Used where allocations bypass Python (torch's CPU allocator, numba's NRT);
    ``note`` says whose. Falls back to psutil's RSS without a resettable peak
    elsewhere.
    """

    method = "process RSS high-water mark (VmHWM, reset via clear_refs)"

    def __init__(self, note: str = ""):
        self._suffix = f"; {note}" if note else ""

    def reset(self) -> None:
        release_free_memory()  # a worker keeps its heap (core/allocator.py): a call's temporaries must show again
        try:
            Path("/proc/self/clear_refs").write_text("5")
        except OSError:
            pass

    def stats(self) -> MemoryStats:
        status = Path("/proc/self/status")
        if status.exists():
            fields = {}
            for line in status.read_text().splitlines():
                key, _, val = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(val.split()[0]) * 1024
            if "VmHWM" in fields:
                return MemoryStats(fields.get("VmRSS"), fields["VmHWM"], self.method + self._suffix)
        return MemoryStats(_rss(), None, "psutil RSS (no resettable peak on this OS)" + self._suffix)


class AllocatorMemory(MemoryMeter):
    """A device allocator's own counters (torch.cuda, torch.xpu, torch.accelerator ...)."""

    def __init__(self, current: Callable[[], int], peak: Callable[[], int], reset_peak: Callable[[], object],
                 method: str):
        self._current, self._peak, self._reset_peak, self.method = current, peak, reset_peak, method

    def stats(self) -> MemoryStats:
        return MemoryStats(self._current(), self._peak(), self.method)

    def reset(self) -> None:
        self._reset_peak()


class SampledPeakMemory(MemoryMeter):
    """A current-usage counter with no high-water mark (CuPy's pool, torch.mps): the peak is sampled."""

    def __init__(self, current: Callable[[], int], method: str):
        self._current, self.method = current, method
        self._peak = 0

    def sample(self) -> None:
        self._read()

    def _read(self) -> int:
        used = int(self._current())
        self._peak = max(self._peak, used)
        return used

    def stats(self) -> MemoryStats:
        used = self._read()
        return MemoryStats(used, self._peak, self.method)

    def reset(self) -> None:
        self._peak = 0
        self._read()


class FallbackMemory(MemoryMeter):
    """``primary`` where it answers, ``fallback`` where it raises one of ``errors``; both are reset and sampled."""

    def __init__(self, primary: MemoryMeter, fallback: MemoryMeter, errors: tuple[type[BaseException], ...]):
        self._primary, self._fallback, self._errors = primary, fallback, errors
        self.method = primary.method

    def stats(self) -> MemoryStats:
        try:
            return self._primary.stats()
        except self._errors:
            return self._fallback.stats()

    def reset(self) -> None:
        self._primary.reset()
        self._fallback.reset()

    def sample(self) -> None:
        self._primary.sample()
        self._fallback.sample()


def _rss() -> int:
    import psutil

    return psutil.Process(os.getpid()).memory_info().rss

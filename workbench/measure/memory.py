"""Peak memory of one untimed call, in one meaning on every backend.

Backends count memory in different ways (tracemalloc, the process's RSS
high-water mark, OpenCL buffer accounting, allocator statistics), and their
raw peaks mean different things: tracemalloc sees only what was allocated
since tracing began, the RSS mark includes the whole interpreter. To make
rows comparable, a cell reports

    peak_mem_bytes = bytes of the kernel's inputs and outputs
                     + the largest extra amount in use during one call

where the extra is (peak after the call) - (in use just before it) by the
backend's own method. The method string says how the extra was measured.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

from workbench.backends.base import Backend


def extra_peak_memory(backend: Backend, fn: Callable[[], Any]) -> tuple[int | None, str]:
    """Largest extra memory in use while ``fn`` runs once, above what was in use before it."""
    was_tracing = tracemalloc.is_tracing()
    try:
        backend.synchronize()
        backend.reset_peak_memory()
        before = backend.memory()
        fn()
        backend.synchronize()
        stats = backend.memory()
    finally:
        if not was_tracing and tracemalloc.is_tracing():
            tracemalloc.stop()  # tracing must never run while a later cell is timed
    if stats.peak_bytes is None:
        return None, stats.method
    base = before.current_bytes if before.current_bytes is not None else 0
    return max(0, int(stats.peak_bytes) - int(base)), stats.method


def peak_memory(backend: Backend, fn: Callable[[], Any], resident_bytes: int = 0) -> tuple[int | None, str]:
    """(inputs + outputs + extra peak during one call, how the extra was measured)."""
    extra, method = extra_peak_memory(backend, fn)
    if extra is None:
        return None, method
    return resident_bytes + extra, f"inputs+outputs + extra during one call by {method}"

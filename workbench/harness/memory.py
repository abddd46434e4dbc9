"""Peak memory of one untimed call, measured by the backend's own method."""

from __future__ import annotations

import tracemalloc
from typing import Any, Callable

from ..backends.base import Backend


def peak_memory(backend: Backend, fn: Callable[[], Any]) -> tuple[int | None, str]:
    """Run ``fn`` once between ``reset_peak_memory()`` and ``memory()``; returns (peak bytes, method).

    Backends that count with tracemalloc switch tracing on when reset. Tracing
    slows every Python-visible allocation, so it is switched off again if it was
    off before: it must never be running while a later cell is timed.
    """
    was_tracing = tracemalloc.is_tracing()
    try:
        backend.synchronize()
        backend.reset_peak_memory()
        fn()
        backend.synchronize()
        stats = backend.memory()
    finally:
        if not was_tracing and tracemalloc.is_tracing():
            tracemalloc.stop()
    peak = stats.peak_bytes
    return (int(peak) if peak is not None else None), stats.method

"""The shape-keyed execution cache of multi-kernel blocks, with statistics in the spirit of InfiniLM's engine.

An inference engine does not re-plan a decoder block on every call: the first
call for a shape *records* (captures a CUDA graph, plans a launch list,
compiles a fused kernel) and every later call for that shape replays the
recording. What the recording cost and how often it was reused are the facts
engineers compare, so the cache counts them: entries (shapes), hits, misses,
recordings, fusion attempts, successes and fallbacks (a fused attempt that
failed and runs eager instead), and the mode each cached shape ended up in.

One process-wide cache (:func:`execution_cache`) serves every block variant,
so a sweep's warm worker keeps its recordings across cells exactly as an
engine keeps them across requests; :func:`clear_cache` empties it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from workbench.catalog.spec import DeviceArrays, KernelCall

#: A recorded (or planned, or compiled) block: ``run(inputs, outputs)``, as a catalog variant's call.
Runner = KernelCall
#: The modes a recording may be made for; ``eager`` appears only as the result of a fallback.
RECORDED_MODES = ("graph", "fused")
#: Entries kept before the least recently used is evicted (each holds its preallocated buffers).
MAX_ENTRIES = 64


@dataclass(frozen=True)
class CacheKey:
    """What one recording is valid for: a block's variant on a backend, at one shape and dtype."""

    block: str
    variant: str
    backend: str
    shape: str
    dtype: str

    @classmethod
    def of(cls, block: str, variant: str, backend: str, params: Mapping[str, int], dtype: str) -> CacheKey:
        return cls(block, variant, backend, shape_label(params), dtype)

    def __str__(self) -> str:
        return f"{self.block}/{self.variant} on {self.backend} {self.dtype} [{self.shape}]"


def shape_label(params: Mapping[str, int]) -> str:
    return ",".join(f"{k}={int(v)}" for k, v in params.items())


class EntryStats(TypedDict):
    """One cached shape in :meth:`ExecutionCache.get_stats`: what it is, the mode it runs in, its reuse."""

    block: str
    variant: str
    backend: str
    shape: str
    dtype: str
    requested: str
    mode: str
    hits: int
    record_s: float
    fallback: str | None


class CacheTotals(TypedDict):
    """The cache's counters (:meth:`ExecutionCache.totals`)."""

    size: int
    hits: int
    misses: int
    recordings: int
    fusion_attempts: int
    fusion_successes: int
    fallbacks: int
    evictions: int


class CacheStats(CacheTotals):
    """:meth:`ExecutionCache.get_stats`: the counters and every cached shape."""

    entries: list[EntryStats]


class CellCacheStats(CacheTotals):
    """:func:`row_stats`: a cell's cached shape and the counters, as a row's ``exec_cache`` holds them (JSON)."""

    mode: str
    requested: str
    shape_hits: int
    record_s: float
    fallback: str | None


@dataclass
class Entry:
    """One cached shape: the runner, the mode it runs in and what reusing it has counted."""

    key: CacheKey
    requested: str
    mode: str
    runner: Runner
    #: Seconds from the miss to the end of the first run: capture / plan / compile and the JIT's first call.
    record_s: float
    hits: int = 0
    fallback: str | None = None

    def to_dict(self) -> EntryStats:
        return {"block": self.key.block, "variant": self.key.variant, "backend": self.key.backend,
                "shape": self.key.shape, "dtype": self.key.dtype, "requested": self.requested, "mode": self.mode,
                "hits": self.hits, "record_s": self.record_s, "fallback": self.fallback}


class ExecutionCache:
    """Shape-keyed recordings of block executions, with hit / miss / recording / fusion statistics."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[CacheKey, Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._zero()

    def _zero(self) -> None:
        self.hits = self.misses = self.recordings = self.evictions = 0
        self.fusion_attempts = self.fusion_successes = self.fallbacks = 0

    def run(self, key: CacheKey, mode: str, record: Callable[[], Runner], inputs: DeviceArrays,
            outputs: DeviceArrays, eager: Callable[[], Runner] | None = None) -> Any:
        """Run the block for ``key``: replay its recording (a hit), or record it first (a miss).

        ``record()`` captures / plans / compiles the block for this shape and
        returns its runner. In ``fused`` mode a failing ``record()`` falls back
        to ``eager()`` (counted; the entry's mode becomes ``eager`` and keeps the
        reason); without ``eager``, or in ``graph`` mode, the error propagates
        and nothing is cached, so the next call tries again.
        """
        entry = self._entries.get(key)
        if entry is None:
            t = time.perf_counter()
            entry, fresh = self._record(key, mode, record, eager)
            if not fresh:
                return entry.runner(inputs, outputs)
            result = entry.runner(inputs, outputs)  # the first run completes the recording (JIT compiles, captures)
            entry.record_s = time.perf_counter() - t
            return result
        entry.hits += 1
        self.hits += 1
        return entry.runner(inputs, outputs)

    def _record(self, key: CacheKey, mode: str, record: Callable[[], Runner],
                eager: Callable[[], Runner] | None) -> tuple[Entry, bool]:
        if mode not in RECORDED_MODES:
            raise ValueError(f"execution cache: mode {mode!r} is not recorded; "
                             f"valid modes: {', '.join(RECORDED_MODES)}")
        with self._lock:
            found = self._entries.get(key)
            if found is not None:  # another thread recorded it meanwhile
                found.hits += 1
                self.hits += 1
                return found, False
            self.misses += 1
            if mode == "fused":
                self.fusion_attempts += 1
            try:
                runner, actual, reason = record(), mode, None
            except Exception as exc:  # noqa: BLE001 - a failed fusion is a statistic when eager can stand in
                if mode != "fused" or eager is None:
                    raise
                runner, actual, reason = eager(), "eager", f"{type(exc).__name__}: {exc}"
                self.fallbacks += 1
            else:
                self.recordings += 1
                if mode == "fused":
                    self.fusion_successes += 1
            entry = Entry(key, mode, actual, runner, 0.0, fallback=reason)
            self._entries[key] = entry
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
                self.evictions += 1
            return entry, True

    def entry(self, key: CacheKey) -> Entry | None:
        return self._entries.get(key)

    def get_stats(self) -> CacheStats:
        """Cache size, hits, misses, recordings, fusion attempts / successes / fallbacks, evictions, and
        each cached shape with its mode (``entries``)."""
        return {**self.totals(), "entries": [e.to_dict() for e in self._entries.values()]}

    def totals(self) -> CacheTotals:
        return {"size": len(self._entries), "hits": self.hits, "misses": self.misses,
                "recordings": self.recordings, "fusion_attempts": self.fusion_attempts,
                "fusion_successes": self.fusion_successes, "fallbacks": self.fallbacks,
                "evictions": self.evictions}

    def clear(self) -> None:
        """Drop every recording (and its buffers) and zero the statistics."""
        with self._lock:
            self._entries.clear()
            self._zero()


_CACHE = ExecutionCache()


def execution_cache() -> ExecutionCache:
    """The process-wide cache every block variant records into."""
    return _CACHE


def execution_stats() -> CacheStats:
    """``get_stats()`` of the process-wide cache."""
    return _CACHE.get_stats()


def clear_cache() -> None:
    """Empty the process-wide cache and zero its statistics."""
    _CACHE.clear()


def row_stats(block: str, variant: str, backend: str, params: Mapping[str, int], dtype: str) -> CellCacheStats | None:
    """What a measurement row records: this cell's cached shape (mode, hits, recording time, fallback) and
    the cache's totals at the end of the cell; None when the cell's variant records nothing."""
    entry = _CACHE.entry(CacheKey.of(block, variant, backend, params, dtype))
    if entry is None:
        return None
    e = entry.to_dict()
    return {"mode": e["mode"], "requested": e["requested"], "shape_hits": e["hits"],
            "record_s": round(e["record_s"], 6), "fallback": (e["fallback"] or "")[:300] or None, **_CACHE.totals()}

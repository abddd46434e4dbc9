"""Seeded inputs and references made once per (kernel, params, dtype) group, not once per cell."""

from __future__ import annotations

import threading
from collections.abc import Callable

from workbench.backends.base import Backend
from workbench.catalog.spec import Arrays, KernelSpec, Variant
from workbench.core.record import canonical_params
from workbench.measure.case import Case, make_host_inputs, reference_outputs
from workbench.measure.shared_arrays import SharedArrays

#: Host inputs and references an :class:`InputCache` keeps across groups (rounds revisit every group).
INPUT_CACHE_BYTES = 1 << 30

#: A group: (the spec object's id, kernel, canonical params, dtype).
Group = tuple[int, str, str, str]
#: A group's references by seed, and the audits' changed versions by ("version", seed).
RefKey = int | tuple[str, int]
#: A group's entry: (inputs by seed, references and versions).
GroupEntry = tuple[dict[int, Arrays], dict[RefKey, Arrays]]


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
        self._group: Group | None = None
        self._inputs: dict[int, Arrays] = {}
        self._refs: dict[RefKey, Arrays] = {}
        #: group -> (inputs by seed, references by seed), most recently used last
        self._groups: dict[Group, GroupEntry] = {}

    @staticmethod
    def _nbytes(entry: GroupEntry) -> int:
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

    def host_inputs(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int) -> Arrays:
        with self._lock:
            self._enter(spec, params, dtype)
            if seed not in self._inputs:
                self._inputs[seed] = self._made("inputs", spec, params, dtype, seed,
                                                lambda: make_host_inputs(spec, params, dtype, seed))
                self._evict()
            return self._inputs[seed]

    def reference(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int) -> Arrays:
        with self._lock:
            host = self.host_inputs(spec, params, dtype, seed)
            if seed not in self._refs:
                self._refs[seed] = self._made("reference", spec, params, dtype, seed,
                                              lambda: reference_outputs(spec, host, params))
                self._evict()
            return self._refs[seed]

    def version(self, spec: KernelSpec, params: dict[str, int], dtype: str, seed: int,
                make: Callable[[], Arrays]) -> Arrays:
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
              make: Callable[[], Arrays]) -> Arrays:
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


class SharedInputCase(Case):
    """A :class:`Case` whose seeded inputs and reference come from an :class:`InputCache`."""

    def __init__(self, spec: KernelSpec, variant: Variant, backend: Backend, params: dict[str, int], dtype: str,
                 seed: int, cache: InputCache):
        self._cache = cache
        super().__init__(spec, variant, backend, params, dtype, seed)

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.host_inputs = self._cache.host_inputs(self.spec, self.params, self.dtype, seed)
        self.reference = self._cache.reference(self.spec, self.params, self.dtype, seed)
        self.inputs = self.device_inputs(self.host_inputs)

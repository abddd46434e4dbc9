"""Working sets from this machine's caches: the sizes at which the quick suite and the tutorials ask their
questions, so that "in the per-core cache" and "past the last-level cache" are true wherever they run.

A last-level cache is 32 MiB on one of our hosts and 480 MiB on another: no size here is a constant. The cache
sizes come from :func:`workbench.roofs.probe.cache_sizes` (sysfs, else py-cpuinfo), the one reader the roof
probe uses too. Three working sets (compulsory bytes a call moves):

- ``cache``: half the per-core cache, so a call runs from it;
- ``larger``: twice the last-level cache, capped at :data:`MAX_LARGE_WORKING_SET` (and at least 8x
  ``cache``): past the per-core cache everywhere, past the last-level cache only where that is small. Every
  quick family gets it; its cost stays bounded on a host whose "LLC" is hundreds of MiB;
- ``dram``: twice the last-level cache, capped only at :data:`MAX_DRAM_WORKING_SET` (1 GiB): past the
  last-level cache on every host we know. Only the memory-bound families (:data:`DRAM_FAMILIES`) and the
  memory-bound tutorials (01, 05) use it, so its cost is paid a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.roofs.probe import cache_sizes as probed_cache_sizes

if TYPE_CHECKING:
    from workbench.catalog.spec import KernelSpec

#: Largest working set of the quick suite's larger size for the families that are not memory-bound. Twice the
#: last-level cache is the rule, but a cloud host may report a 260 MiB LLC shared with other guests: there a
#: 512 MiB working set took 56 s for one round of one numpy softmax cell (2 cores, loaded); at 64 MiB the 32
#: larger cells still took 199 s of an idle demo's 288 s of cells. Past this cap the larger size still leaves
#: the per-core cache far behind (32x on a 1 MiB L2); the sizes note says when the LLC may still serve it.
MAX_LARGE_WORKING_SET = 32 * 2**20
#: Largest working set of the past-the-LLC size (memory-bound families and tutorials): twice a 480 MiB LLC fits.
MAX_DRAM_WORKING_SET = 2**30
#: Where the OS reports no per-core cache: a working set of half of this is taken to fit.
DEFAULT_PER_CORE = 2**20
#: The quick suite's memory-bound families: measured past the last-level cache (``dram``), not at ``larger``.
#: A bounded count: each is a single pass over its arrays, so even a 960 MiB working set is a fraction of a
#: second a call; the compute-heavier families (transcendental math, GEMM) stay at ``larger``.
DRAM_FAMILIES = frozenset({"streaming", "reduction"})


@dataclass(frozen=True)
class WorkingSets:
    """The three working sets (bytes), and the cache sizes they come from (None where the OS does not say)."""

    cache: int
    larger: int
    dram: int
    per_core: int | None
    llc: int | None

    def past_llc(self, nbytes: float) -> bool:
        """Whether ``nbytes`` is larger than the last-level cache (False where its size is unknown)."""
        return bool(self.llc) and nbytes > self.llc  # type: ignore[operator]

    def caches_left(self, nbytes: float) -> int:
        """How many of the known caches (per-core, last-level) ``nbytes`` has left: only those it is larger than,
        :meth:`past_llc`'s rule. A working set as large as a cache fills it and has not left it (10 printed "leaves
        the 1 MiB per-core cache" for a 1 MiB cache its size line called "as large as" it)."""
        return sum(nbytes > c for c in (self.per_core, self.llc) if c)

    def cache_place(self, nbytes: float) -> str:
        """Where a working set of ``nbytes`` sits among the known caches, in words, by :meth:`caches_left`'s rule:
        "within" a cache it is smaller than, "as large as" one it equals (not left), "past" the last-level one."""
        known = [(c, name) for c, name in ((self.per_core, "per-core"), (self.llc, "last-level")) if c]
        if not known:
            return "cache sizes unknown"
        for c, name in known:
            if nbytes < c:
                return f"within the {mib(c)} {name} cache"
            if nbytes == c:
                return f"as large as the {mib(c)} {name} cache"
        return f"past the {mib(known[-1][0])} {known[-1][1]} cache" + (" (DRAM)" if self.llc else "")


def cache_sizes() -> tuple[int | None, int | None]:
    """(largest per-core cache, last-level cache) in bytes, from :func:`workbench.roofs.probe.cache_sizes`."""
    c = probed_cache_sizes()
    return (c.l2 or c.l1d), c.llc


def working_sets(sizes: Callable[[], tuple[int | None, int | None]] | None = None) -> WorkingSets:
    """This machine's working sets (see the module's docstring); ``sizes`` replaces :func:`cache_sizes`."""
    per_core, llc = (sizes or cache_sizes)()
    cache = (per_core or DEFAULT_PER_CORE) // 2
    larger = max(min(2 * llc, MAX_LARGE_WORKING_SET) if llc else MAX_LARGE_WORKING_SET, 8 * cache)
    dram = max(min(2 * llc, MAX_DRAM_WORKING_SET), larger) if llc else larger  # unknown LLC: nothing to pass
    return WorkingSets(cache, larger, dram, per_core, llc)


def mib(n: float) -> str:
    """Bytes as "32 MiB" or "512 KiB"."""
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"


def where(ws: int, llc: int | None) -> str:
    """What serves a working set of ``ws`` bytes, against the last-level cache ``llc``, in words."""
    if not llc:
        return "last-level cache size unknown"
    if ws >= 2 * llc:
        return f"{'twice' if ws == 2 * llc else 'more than twice'} the {mib(llc)} last-level cache: from DRAM"
    if ws > llc:
        return f"past the {mib(llc)} last-level cache, which may still serve part of it"
    return f"within the {mib(llc)} last-level cache, which may serve all of it"


def quick_sizes_note(families: Sequence[tuple[str, str, str]], ws: WorkingSets | None = None) -> str:
    """Where the quick suite's working sets come from and what serves each: ``families`` are its
    (family, kernel, question) triples."""
    ws = ws or working_sets()
    text = (f"quick's sizes: a working set of {mib(ws.cache)} (half the {mib(ws.per_core or 2 * ws.cache)} "
            f"per-core cache) and a larger one")
    if not ws.llc:
        return f"{text} of {mib(ws.larger)} (cache sizes unknown)"
    dram = [k for f, k, _ in families if f in DRAM_FAMILIES]
    others = [k for f, k, _ in families if f not in DRAM_FAMILIES]
    parts = []
    if dram:
        parts.append(f"{' and '.join(dram)} (memory-bound) at {mib(ws.dram)} ({where(ws.dram, ws.llc)})")
    if others:
        capped = (f"past the per-core cache; twice the last-level cache would be {mib(2 * ws.llc)}, capped at "
                  f"{mib(MAX_LARGE_WORKING_SET)}: " if ws.larger < 2 * ws.llc else "")
        parts.append(f"{'the others' if dram else 'every family'} at {mib(ws.larger)} "
                     f"({capped}{where(ws.larger, ws.llc)})")
    return f"{text}: {'; '.join(parts)}"


def sized(spec: KernelSpec, nbytes: float, axes: Sequence[str] | None = None, max_flops: float | None = None,
          base: Mapping[str, int] | None = None) -> dict[str, int]:
    """The size of ``spec`` whose working set (compulsory bytes a call, float32) is the largest at most
    ``nbytes``: ``base`` (default: the kernel's largest quick size) with ``axes`` (default: its first) scaled
    together, as multiples of 64 from 128 up; at most ``max_flops`` a call where given."""
    quick = spec.sizes.get("quick") or next(iter(spec.sizes.values()))
    start = spec.validate_params(dict(base) if base else quick[-1])
    scaled = tuple(axes or spec.axes[:1])

    def at(scale: float) -> dict[str, int]:
        return {a: (_round64(v * scale) if a in scaled else v) for a, v in start.items()}

    def fits(p: dict[str, int]) -> bool:
        return spec.bytes_moved(p, 4) <= nbytes and (max_flops is None or spec.flops(p) <= max_flops)

    lo, hi = 1e-6, 1e6  # the largest scale that still fits, by bisection in log space
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if fits(at(mid)) else (lo, mid)
    return at(lo)


def _round64(x: float) -> int:
    """A multiple of 64 (tiled kernels' favourite) from 128 up; below that, any positive integer."""
    return round(x / 64) * 64 if x >= 128 else max(1, round(x))

"""Measure the CPU's roofs in a few seconds: one set for every runtime that runs on the CPU.

- bandwidth: the best of a STREAM triad (``a = b + s*c``, 12 bytes per float32 element as STREAM counts
  them), an in-place update (``a = a + s*c``, 12 bytes) and a read-only pass (4 bytes) with the best runtime
  available — numba (compiled loops, one chunk per thread, repeated inside one call so a call's overhead is
  negligible even at L1 sizes), else numpy (a triad in two passes, counted as the 20 bytes per element they
  really move). See :data:`STREAM_KERNELS` for why not the triad alone. Working sets come from the cache
  sizes the OS reports (Linux sysfs, else
  py-cpuinfo): half of L1d and half of L2 per thread, a quarter of the last-level cache, twice the
  last-level cache for DRAM. A cache size nobody reports leaves that level's roof missing, with the reason;
  no size is assumed. numpy's per-call overhead dominates at cache sizes, so without numba only DRAM is
  measured.
- peak FLOP/s per dtype: BLAS GEMM (``numpy.matmul``) sized from a pilot so one call takes ~20 ms, on
  every BLAS thread and on one thread by its CPU time (times the cores), the better of the two.

Each figure is the best of several repeats. A figure whose repeats spread widely, or that lies far below
another roof of the same device that it should exceed (a cache level below DRAM, float32 GEMM below
float64), is measured again; still wrong, it is refused: the roof is missing and says why.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from workbench.backends.cpu_common import cpuinfo_dict
from workbench.core.threads import usable_cores
from workbench.roofs.model import AUTO_METHOD_PREFIX, AUTO_PROBE, CACHE_LEVELS, Roof, RoofKind, RoofSet

#: Repeats per figure; the best counts (STREAM's rule), the median judges stability.
REPEATS = 5
#: Repeats spreading more than this (median / best - 1) are unstable: measured again, then refused.
UNSTABLE_SPREAD = 0.5
#: A cache level below this share of DRAM bandwidth (or float32 GEMM below this share of float64) is far
#: below a roof it must exceed: measured again, then refused.
FAR_BELOW = 0.5
#: Seconds one timed triad or GEMM call should take.
CALL_S = 0.02
GEMM_PILOT = 256
GEMM_MAX = 2048
GEMM_DTYPES = ("float32", "float64")
#: DRAM triad working set, in last-level caches, and its cap in bytes (a 260 MiB "LLC" of a VM slice would
#: otherwise ask for gigabytes).
DRAM_LLC_FACTOR = 2
DRAM_MAX_BYTES = 512 << 20
DRAM_MIN_BYTES = 64 << 20


@dataclass(frozen=True)
class CacheSizes:
    """Per-core L1d and L2, the shared last-level cache, and where the sizes came from."""

    l1d: int | None
    l2: int | None
    llc: int | None
    source: str


def _size(text: str) -> int | None:
    text = text.strip()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * scale if digits.isdigit() else None


def cache_sizes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> CacheSizes:
    """The CPU's cache sizes as the OS reports them (sysfs on Linux, else py-cpuinfo); None for a level
    nobody reports."""
    levels: dict[int, int] = {}
    for index in sorted(root.glob("index*")):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level, size = int((index / "level").read_text()), _size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if size:
            levels[level] = size
    if levels:
        top = max(levels)
        return CacheSizes(levels.get(1), levels.get(2) if top > 2 else None, levels[top] if top > 1 else None,
                          "sysfs")
    try:
        info = cpuinfo_dict()
    except Exception:  # noqa: BLE001 - no cache sizes: the cache roofs say so
        return CacheSizes(None, None, None, "not reported")
    get = lambda k: _size(str(info.get(k) or "").replace(" KiB", "K").replace(" MiB", "M"))  # noqa: E731
    return CacheSizes(get("l1_data_cache_size"), get("l2_cache_size"), get("l3_cache_size"), "py-cpuinfo")


# -- timing ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figure:
    """Best and median rate of a probe's repeats."""

    best: float
    median: float

    @property
    def spread(self) -> float:
        return self.best / self.median - 1 if self.median > 0 else math.inf


def _repeat(call: Callable[[], None], work: float, clock: Callable[[], float] = time.perf_counter) -> Figure:
    """Rate (work per second) of ``call``, best and median of :data:`REPEATS` after one warm-up."""
    call()
    rates = []
    for _ in range(REPEATS):
        t0 = clock()
        call()
        rates.append(work / max(clock() - t0, 1e-9))
    return Figure(max(rates), float(np.median(rates)))


#: The streaming kernels a bandwidth roof is the best of: (name, bytes counted per float32 element). The
#: triad writes an array it does not read, so the hardware also reads each of its lines first (write-allocate):
#: it moves 16 bytes where STREAM counts 12, and an in-place update (saxpy's pattern: 12 bytes, all moved)
#: ran 14% above a triad-only LLC roof on the quick suite; a read-only pass (a reduction's pattern) goes
#: faster still. A roof is the most a level delivers, so it is the best of the three.
STREAM_KERNELS = (("triad", 12.0), ("update", 12.0), ("read", 4.0))


def _triad_kernels() -> dict[str, tuple[Callable[..., None], Callable[..., None]]] | None:
    """Per :data:`STREAM_KERNELS` name, (one thread, one chunk per thread) numba loops, or None without numba.
    Each takes ``(a, b, c, s, reps[, chunks])``; a new scalar each pass, so no pass can be skipped."""
    try:
        from workbench.roofs.stream_loops import parallel, serial
    except ImportError:  # numba is an extra
        return None
    kinds = {name: i for i, (name, _) in enumerate(STREAM_KERNELS)}
    return {name: (partial(serial, k), partial(parallel, k)) for name, k in kinds.items()}


def cores() -> int:
    """Cores this process may run on (a private cache's bandwidth scales with them)."""
    return usable_cores()


def _reps(call: Callable[[int], None], n: int) -> int:
    """Passes per call so that one call takes about :data:`CALL_S`."""
    call(1)
    t0 = time.perf_counter()
    call(1)
    return max(1, int(CALL_S / max(time.perf_counter() - t0, 1e-7)))


def triad_rate(nbytes: int, kernels: dict[str, tuple[Callable[..., None], Callable[..., None]]] | None, *,
               per_core: bool) -> tuple[Figure, str]:
    """GB/s over ``nbytes`` (three float32 arrays): the best of :data:`STREAM_KERNELS` (a STREAM triad, an
    in-place update, a read-only pass), each as STREAM counts its bytes.

    ``per_core``: one thread timed by its own CPU time (a neighbour's time slices do not count against it)
    times the cores, for a level each core has privately (L1, L2); otherwise the better of that one thread
    and one chunk per core timed by the wall clock, for what the cores share (LLC, DRAM)."""
    s = np.float32(3.0)
    if kernels is None:
        n = max(256, nbytes // 12)
        a, b, c = (np.full(n, v, dtype=np.float32) for v in (0.0, 1.0, 2.0))

        def numpy_triad() -> None:
            np.multiply(c, s, out=a)
            np.add(a, b, out=a)

        return (_repeat(numpy_triad, 20.0 * n / 1e9),
                f"STREAM triad (numpy, two passes: 20 B/element), {n} float32 x3")
    k = cores()
    n = max(256, (nbytes // k if per_core else nbytes) // 12)
    a, b, c = (np.full(n, v, dtype=np.float32) for v in (0.0, 1.0, 2.0))
    best: tuple[Figure, str] | None = None
    for name, per_element in STREAM_KERNELS:
        serial, parallel = kernels[name]
        reps = _reps(lambda r, f=serial: f(a, b, c, s, r), n)
        one = _repeat(lambda f=serial, r=reps: f(a, b, c, s, r), per_element * n * reps / 1e9, time.thread_time)
        found = (Figure(one.best * k, one.median * k),
                 f"best of STREAM triad, update and read: {name} (numba, one thread by its CPU time, x{k} cores), "
                 f"{n} float32 x3, {reps} passes")
        if not per_core:
            found = (one, f"best of STREAM triad, update and read: {name} (numba, one thread by its CPU time), "
                          f"{n} float32 x3")
            reps = _reps(lambda r, f=parallel: f(a, b, c, s, r, k), n)
            many = _repeat(lambda f=parallel, r=reps: f(a, b, c, s, r, k), per_element * n * reps / 1e9)
            if many.best >= one.best:
                found = (many, f"best of STREAM triad, update and read: {name} (numba, {k} threads), "
                               f"{n} float32 x3, {reps} passes")
        if best is None or found[0].best > best[0].best:
            best = found
    assert best is not None
    return best


def gemm_rate(dtype: str) -> tuple[Figure, str]:
    """GFLOP/s of BLAS GEMM (numpy.matmul) at a size whose call takes about :data:`CALL_S`: the better of
    every BLAS thread timed by the wall clock and one BLAS thread timed by its own CPU time times the cores
    (a neighbour's time slices, or one preempted thread holding up the rest, do not count against it)."""
    from threadpoolctl import threadpool_limits

    def at(n: int, clock: Callable[[], float]) -> Figure:
        x = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
        out = np.empty_like(x)
        return _repeat(lambda: np.matmul(x, x, out=out), 2.0 * n**3 / 1e9, clock)

    def sized(pilot: Figure, clock: Callable[[], float], scale: float) -> tuple[Figure, int]:
        n = int(min(GEMM_MAX, max(GEMM_PILOT, (CALL_S * pilot.best / scale * 1e9 / 2) ** (1 / 3) // 128 * 128)))
        fig = at(n, clock) if n > GEMM_PILOT else pilot
        return (fig, n) if fig.best >= pilot.best else (pilot, GEMM_PILOT)

    many, n_many = sized(at(GEMM_PILOT, time.perf_counter), time.perf_counter, 1.0)
    k = cores()
    with threadpool_limits(limits=1, user_api="blas"):
        one, n_one = sized(at(GEMM_PILOT, time.thread_time), time.thread_time, 1.0)
    if many.best >= one.best * k:
        return many, f"BLAS GEMM (numpy.matmul, every BLAS thread) {n_many}x{n_many}x{n_many} {dtype}"
    return (Figure(one.best * k, one.median * k),
            f"BLAS GEMM (numpy.matmul, one thread by its CPU time, x{k} cores) {n_one}x{n_one}x{n_one} {dtype}")


# -- the probe ------------------------------------------------------------------------------------

def _measured(device: str, kind: RoofKind, measure: Callable[[], tuple[Figure, str]], *, dtype: str | None = None,
              working_set: float | None = None, floor: float | None = None) -> Roof:
    """One roof: measured, measured again when unstable or below ``floor``, refused when still so."""
    problem = ""
    for attempt in range(2):
        fig, method = measure()
        if fig.spread > UNSTABLE_SPREAD:
            problem = (f"unstable across {REPEATS} repeats (best {fig.best:.3g}, median {fig.median:.3g} "
                       f"{kind.unit}) twice: machine busy?")
        elif floor is not None and fig.best < floor * FAR_BELOW:
            problem = f"{fig.best:.3g} {kind.unit} is far below {floor:.3g} {kind.unit}, which it must exceed, twice"
        else:
            note = " (measured twice)" if attempt else ""
            return Roof(device, kind, fig.best, AUTO_PROBE,
                        f"{AUTO_METHOD_PREFIX}: {method}, best of {REPEATS}{note}", dtype, working_set)
    return Roof(device, kind, None, AUTO_PROBE, f"{AUTO_METHOD_PREFIX}: {method}", dtype, working_set,
                missing=f"probe refused: {problem}")


def measure_cpu(device: str, caches: CacheSizes | None = None) -> RoofSet:
    """The CPU's roofs measured in this process: DRAM and cache-level bandwidth, peak FLOP/s per dtype."""
    caches = caches or cache_sizes()
    triad = _triad_kernels()
    k = cores()
    roofs: list[Roof] = []
    dram_bytes = max(DRAM_MIN_BYTES, min(DRAM_MAX_BYTES, DRAM_LLC_FACTOR * (caches.llc or 0)))
    dram = _measured(device, RoofKind.DRAM, lambda: triad_rate(dram_bytes, triad, per_core=False))
    roofs.append(dram)
    # (size, working set probed, working set the level holds, name): half of each core's L1d / L2 per core,
    # a quarter of the shared last-level cache
    per_level = {kind: (size, size * k / 2 if size else 0, size * k if size else None, name)
                 for kind, size, name in ((RoofKind.L1, caches.l1d, "L1d"), (RoofKind.L2, caches.l2, "L2"))}
    per_level[RoofKind.LLC] = (caches.llc, (caches.llc or 0) / 4, caches.llc, "last-level cache")
    floor = dram.value
    for kind in reversed(CACHE_LEVELS):  # LLC, L2, L1: each must beat the level outside it
        size, probed, holds, name = per_level[kind]
        if triad is None:
            roofs.append(Roof(device, kind, None, AUTO_PROBE, working_set_bytes=holds,
                              missing="needs numba: numpy's per-call overhead hides cache bandwidth"))
            continue
        if not size:
            roofs.append(Roof(device, kind, None, AUTO_PROBE, missing=f"the {name} size is not reported "
                                                                        f"({caches.source})"))
            continue
        roof = _measured(device, kind, lambda ws=int(probed), private=kind is not RoofKind.LLC: triad_rate(
            ws, triad, per_core=private), working_set=holds, floor=floor)
        roofs.append(roof)
        floor = roof.value or floor
    fl64 = None
    for dtype in reversed(GEMM_DTYPES):  # float64 first: float32 must not be far below it
        roof = _measured(device, RoofKind.FLOPS, lambda dtype=dtype: gemm_rate(dtype), dtype=dtype,
                         floor=fl64 if dtype == "float32" else None)
        roofs.append(roof)
        fl64 = roof.value if dtype == "float64" else fl64
    return RoofSet(device, roofs)


# -- in a process of its own ----------------------------------------------------------------------

#: Seconds the probe process may take (a few seconds idle; a busy machine stretches it).
PROBE_TIMEOUT_S = 120.0


def _roof_to_dict(r: Roof) -> dict[str, object]:
    return {"kind": r.kind.name, "value": r.value, "source": r.source, "method": r.method, "dtype": r.dtype,
            "working_set_bytes": r.working_set_bytes, "missing": r.missing}


def refusal_limits() -> tuple[float, float]:
    """(:data:`UNSTABLE_SPREAD`, :data:`FAR_BELOW`) as this process has them: the probe process is handed them,
    so what refuses a roof is decided by the caller (a test that sets them aside sets them aside there too)."""
    return UNSTABLE_SPREAD, FAR_BELOW


def probe_cpu(device: str, timeout_s: float = PROBE_TIMEOUT_S) -> RoofSet:
    """The CPU's roofs (:func:`measure_cpu`) measured in a fresh interpreter, so the caller's process (a
    notebook, a sweep's parent) gets no numba threads, no changed BLAS thread pool and no crash of its own;
    a probe that fails or times out leaves every roof missing, with the reason. The child refuses a roof by
    this process's :func:`refusal_limits`."""
    import json
    import subprocess
    import sys

    spread, far_below = refusal_limits()
    try:
        done = subprocess.run([sys.executable, "-m", "workbench.roofs.probe", device, repr(spread), repr(far_below)],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
        if done.returncode != 0:
            raise RuntimeError((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
        found = [Roof(device, RoofKind[d["kind"]], d["value"], d["source"], d["method"], d["dtype"],
                      d["working_set_bytes"], d["missing"]) for d in json.loads(done.stdout)]
    except (OSError, ValueError, KeyError, RuntimeError, subprocess.TimeoutExpired) as exc:
        why = f"probe process failed: {exc}"
        return RoofSet(device, [Roof(device, kind, None, AUTO_PROBE, missing=why)
                                for kind in (RoofKind.DRAM, *CACHE_LEVELS)]
                       + [Roof(device, RoofKind.FLOPS, None, AUTO_PROBE, dtype=dt, missing=why) for dt in GEMM_DTYPES])
    return RoofSet(device, found)


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) > 3:  # the parent's refusal limits (probe_cpu): "inf" sets a check aside
        UNSTABLE_SPREAD, FAR_BELOW = float(sys.argv[2]), float(sys.argv[3])
    print(json.dumps([_roof_to_dict(r) for r in measure_cpu(sys.argv[1]).roofs]))

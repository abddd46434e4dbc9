"""This machine's roofs, one set per physical device, stored per (environment, backend).

Every runtime on the host CPU (numpy, numba, torch-cpu, OpenCL on PoCL, Vulkan on lavapipe, the Triton
interpreter) shares the CPU's roofs, measured once by :func:`workbench.roofs.probe.probe_cpu` (STREAM triad
at DRAM and cache-level working sets, BLAS GEMM per dtype) and copied to each of those backends' rows of
the peaks table, with the device named in ``details``. A GPU's roofs are measured by its own runtime:

Both are measured with the catalog's own variants through the ordinary harness
(verified, timed, the same timer), so "% of peak" compares like with like:

- bandwidth: saxpy (STREAM triad: two reads, one write) moving at least 4× the
  last-level cache per call (and at least 16M elements), so no call finds its
  data in cache; the best saxpy variant of the backend counts. Peak = bytes /
  fastest sample, as STREAM reports.
- FLOP rate: the backend's library GEMM per dtype at 2048³ on CPUs, 8192³ on
  GPUs. Where there is no library GEMM, the best hand-written one, sized from
  a 256³ pilot so one call takes about ``GEMM_CALL_S``: a slow kernel (PoCL, a
  naive loop) is measured at a smaller size instead of taking minutes.

Results go to the store's peaks table keyed by (environment, backend).

:func:`ensure_ceilings` is the automatic, much shorter form of the same probe:
the first time a sweep uses a backend in an environment it measures one saxpy
(about 3× the last-level cache) and one GEMM per dtype sized to a few tens of
milliseconds a call, from a 256³ pilot (a slow hand-written kernel stays at the
pilot), and stores them with a method starting ``automatic probe``. Later runs
in the same environment reuse them (from the store, or from a small per-user
cache so a fresh store does not probe again); ``workbench peaks`` replaces
them with its longer measurement, and an automatic probe never overwrites one.
``WORKBENCH_AUTO_PEAKS=0`` turns the probe off (roofs kept from an earlier probe are still used).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from workbench.backends import registry as backend_registry
from workbench.backends.base import Backend
from workbench.backends.cpu_common import cpu_device_info
from workbench.catalog import registry as catalog
from workbench.catalog.spec import Variant
from workbench.core.env_values import env_flag
from workbench.core.output_guard import atomic_write_text
from workbench.core.record import JsonObject, RowDict
from workbench.core.regular_files import read_regular_text
from workbench.core.status import Status
from workbench.measure.cell import Cell, CellWorker
from workbench.measure.gpu_budget import GpuBudget
from workbench.measure.isolation import CellExecutor, as_executor
from workbench.measure.timer import TimingConfig
from workbench.roofs.model import AUTO_METHOD_PREFIX, RoofKind, RoofSet, roof_set_from_table, source_of_method
from workbench.roofs.probe import probe_cpu, refusal_limits
from workbench.roofs.throughput import BANDWIDTH, FLOPS, Ceilings
from workbench.store.database import Store, current_environment, open_store

log = logging.getLogger(__name__)

STREAM_MIN_ELEMENTS = 2**24
GEMM_DTYPES = ("float32", "float64")
GEMM_PILOT = 256
GEMM_CALL_S = 0.15
#: A probe's GPU visits read no energy per call (a second a cell, for a figure no roof uses).
PROBE_GPU = GpuBudget(energy_s=0.0)
PROBE_CONFIG = TimingConfig(warmup_s=0.1, budget_s=0.5, target_spread=0.01, min_samples=5, max_samples=200,
                            n_inputs=1, gpu=PROBE_GPU)
PILOT_CONFIG = TimingConfig(gpu=PROBE_GPU, warmup_s=0.0, budget_s=0.0, min_samples=3, n_inputs=1)
PROBE_TIMEOUT_S = 60.0


@dataclass
class Peak:
    backend: str
    metric: str  # bandwidth_gbps | gflops
    dtype: str
    value: float | None
    unit: str
    method: str
    #: What the roof was measured with (variant, size, the other candidates tried, how busy the machine was).
    details: JsonObject


def _candidates(kernel: str, backend: Backend) -> list[Variant]:
    """Variants of ``kernel`` for this backend, library first, compiled forms last (their build is slow)."""
    try:
        vs = catalog.variants(kernel).values()
    except ValueError:
        return []
    usable = [v for v in vs if backend.runtime in v.runtimes]
    return sorted(usable, key=lambda v: (not v.library, v.mode == "compiled", "naive" in v.name, v.name))


def _stream_elements(backend: Backend) -> int:
    """Elements per saxpy array: 3 arrays × 4 bytes moving at least 4× the last-level cache."""
    llc = backend.device_info().last_level_cache_bytes or 32 * 2**20
    return max(STREAM_MIN_ELEMENTS, math.ceil(4 * llc / 12))


def _largest_gemm(backend: Backend) -> int:
    return 2048 if backend.device_info().kind == "cpu" else 8192


def _gemm_size(backend: Backend, pilot_gflops: float) -> int:
    """Square size whose call takes about ``GEMM_CALL_S`` at the pilot's rate, in steps of 256."""
    n = (GEMM_CALL_S * pilot_gflops * 1e9 / 2) ** (1 / 3)
    return int(min(_largest_gemm(backend), max(GEMM_PILOT, n // GEMM_PILOT * GEMM_PILOT)))


def _gemm_cell(backend: Backend, v: Variant, dtype: str, n: int) -> Cell:
    return Cell.make("gemm", v.name, backend.name, dtype, {"m": n, "n": n, "k": n}, v.mode)


def physical_device(backend: Backend) -> tuple[str, bool]:
    """(the physical device ``backend`` runs on, whether it is the host CPU): every CPU runtime names the
    same CPU, so they share one roof set."""
    info = backend.device_info()
    if info.kind == "cpu":
        return f"CPU {cpu_device_info().name}", True
    return str(info.name), False


def peaks_of(roofs: RoofSet, backend: str) -> list[Peak]:
    """A device's roofs as ``backend``'s rows of the peaks table (a missing roof: value None, its reason)."""
    out = []
    for r in roofs.roofs:
        details = {"device": roofs.device, "working_set_bytes": r.working_set_bytes,
                   **({"missing": r.missing} if r.missing else {})}
        out.append(Peak(backend, r.kind.metric, r.dtype or "float32", r.value if r.known else None, r.unit,
                        r.method if r.known else f"{r.method or r.kind.value}: {r.missing}", details))
    return out


def measure_backend(backend: Backend, worker: CellExecutor | CellWorker) -> list[Peak]:
    device, cpu = physical_device(backend)
    if cpu:
        return peaks_of(_cpu_roofs(device), backend.name)
    out: list[Peak] = []
    worker = as_executor(worker)
    worker.prepare(backend.name)
    n = _stream_elements(backend)
    best: RowDict | None = None
    tried = []
    for v in _candidates("saxpy", backend):
        if v.mode == "compiled" or v.unsupported_reason(backend, "float32"):
            continue
        row = worker.execute(Cell.make("saxpy", v.name, backend.name, "float32", {"n": n}, v.mode), PROBE_CONFIG,
                             timeout_s=PROBE_TIMEOUT_S)
        tried.append(f"{v.name}: {row['status']}")
        if row["status"] == Status.OK and (best is None or row["min_s"] < best["min_s"]):
            best = row
    if best is not None:
        gbps = best["bytes"] / best["min_s"] / 1e9
        out.append(Peak(backend.name, BANDWIDTH, "float32", gbps, "GB/s",
                        f"saxpy/{best['variant']} (STREAM triad), n={n} float32, best of {best['n_samples']}",
                        {"variant": best["variant"], "n": n, "median_gbps": best["gbps"], "tried": tried}))
    else:
        out.append(Peak(backend.name, BANDWIDTH, "float32", None, "GB/s",
                        "no saxpy variant measured: " + ("; ".join(tried) or "none for this runtime"), {}))
    if best is not None:
        out.append(gpu_l2_peak(backend, worker, [best["variant"]], PROBE_CONFIG, PROBE_TIMEOUT_S, [], auto=False))

    gemms = [v for v in _candidates("gemm", backend) if v.mode != "compiled"]
    for dtype in GEMM_DTYPES:
        usable = [v for v in gemms if not v.unsupported_reason(backend, dtype)]
        if not usable:
            out.append(Peak(backend.name, FLOPS, dtype, None, "GFLOP/s",
                            f"no gemm variant for {backend.runtime} in {dtype}", {}))
            continue
        v = usable[0]
        row = None
        size = _largest_gemm(backend)
        if not v.library:
            row = worker.execute(_gemm_cell(backend, v, dtype, GEMM_PILOT), PILOT_CONFIG, timeout_s=PROBE_TIMEOUT_S)
            size = _gemm_size(backend, row["flops"] / row["min_s"] / 1e9) if row["status"] == Status.OK else 0
        if size:
            row = worker.execute(_gemm_cell(backend, v, dtype, size), PROBE_CONFIG, timeout_s=PROBE_TIMEOUT_S)
        label = f"gemm/{v.name} {row['size_label']} {dtype}"
        if row["status"] == Status.OK:
            out.append(Peak(backend.name, FLOPS, dtype, row["flops"] / row["min_s"] / 1e9, "GFLOP/s",
                            f"{label}, best of {row['n_samples']}",
                            {"variant": v.name, "params": row["params"], "median_gflops": row["gflops"]}))
        else:
            out.append(Peak(backend.name, FLOPS, dtype, None, "GFLOP/s",
                            f"{label}: {row['status']} {row['message'] or ''}".strip(), {}))
    return out


def measure_peaks(backends: Iterable[str] | None = None, store: Store | str | None = None) -> list[Peak]:
    """Measure and store the peaks of ``backends`` (default: every available one) on this machine."""
    names = list(backends) if backends else backend_registry.available_backends()
    resolved = []
    for name in names:
        b = backend_registry.get(name)
        probe = b.probe()
        if not probe.available:
            raise ValueError(f"backend {b.name!r} is unavailable here: {probe.reason}")
        resolved.append(b)
    st = open_store(store)
    env_id, env = current_environment()
    st.add_environment(env_id, env)
    worker = as_executor(None, "workbench-peaks")
    found: list[Peak] = []
    try:
        for b in resolved:
            for p in measure_backend(b, worker):
                found.append(p)
                if p.value is not None:
                    st.set_peak(env_id, p.backend, p.metric, p.dtype, p.value, p.unit, p.method, p.details)
    finally:
        worker.close()
    return found


# -- the automatic probe ----------------------------------------------------------------------------

#: Set to 0 (or "false", "no", "off") to skip the automatic probe; sweeps then use stored or published ceilings.
ENV_AUTO_PEAKS = "WORKBENCH_AUTO_PEAKS"
#: Where probed ceilings are kept across stores, per environment (``$XDG_CACHE_HOME/workbench``).
ENV_CEILINGS_CACHE = "WORKBENCH_CEILINGS_CACHE"
#: How the automatic probes measure (roof_probe's CPU probe, the catalog probes of other devices): bump it when
#: that changes, so roofs cached by an older probe are measured again. A cache kept a float32 GEMM roof of
#: 224 GFLOP/s from an early probe (one long BLAS call timed by the wall clock on a busy machine) where the
#: current probe reads 298 at load 22, and every later sweep called a 295 GFLOP/s numpy GEMM implausible.
PROBE_VERSION = 6  # 4: bandwidth roofs are the best of a triad, an in-place update and a read-only pass
# 5: a GPU's bandwidth roof is its runtime's fastest saxpy; datasheet fp64 is the tensor-core rate
# 6: a GPU's L2 bandwidth roof beside its HBM one (gpu_l2_peak)
AUTO_CONFIG = TimingConfig(warmup_s=0.02, budget_s=0.15, target_spread=0.02, min_samples=3, max_samples=40,
                           n_inputs=1, gpu=PROBE_GPU)
AUTO_PILOT_CONFIG = TimingConfig(warmup_s=0.01, budget_s=0.05, target_spread=0.02, min_samples=3, max_samples=20,
                                 n_inputs=1, gpu=PROBE_GPU)
#: Working set of the automatic STREAM probe, in last-level caches (streaming through twice the cache, every
#: access misses; generating and checking the inputs is most of the probe's time, so no more than that).
AUTO_STREAM_LLC = 2
AUTO_STREAM_MIN_ELEMENTS = 2**22
#: Saxpy variants the automatic probe of a non-CPU device tries (library first, naive ones last).
AUTO_STREAM_VARIANTS = 3
#: One GEMM call of the automatic probe takes about this long; square sizes step by the pilot.
AUTO_GEMM_CALL_S = 0.03
AUTO_GEMM_MAX = {"cpu": 1024, "gpu": 4096}
AUTO_TIMEOUT_S = 20.0
#: The GPU L2 probe's working set, as a share of the L2 (:func:`gpu_l2_peak`): saxpy's three arrays at half of it
#: stay resident between calls (an H100's L2 is two halves; a line in the far half is slower, but still L2).
L2_PROBE_SHARE = 0.5

_probed: dict[tuple[str, str], list[Peak]] = {}
_cpu_probed: dict[tuple[str, tuple[float, float]], RoofSet] = {}


def _cpu_roofs(device: str) -> RoofSet:
    """The CPU's roofs, measured once per process (every CPU backend asks for the same ones) and per refusal
    limits (a caller that sets the probe's refusals aside gets a probe of its own, not one refused earlier)."""
    key = (device, refusal_limits())
    if key not in _cpu_probed:
        _cpu_probed[key] = probe_cpu(device)
    return _cpu_probed[key]


def auto_peaks_enabled() -> bool:
    """``$WORKBENCH_AUTO_PEAKS`` (default on); a value that is not a yes or a no raises ValueError naming it."""
    return env_flag(ENV_AUTO_PEAKS, True)


def _llc(backend: Backend) -> int | None:
    try:
        return backend.device_info().last_level_cache_bytes or None
    except Exception:  # noqa: BLE001 - no device info: no cache explanation, the ceilings still count
        return None


def _probe_key(backend: Backend) -> str:
    """What a probe is kept under: the physical device (one for every CPU runtime), else the backend on it."""
    try:
        device, cpu = physical_device(backend)
    except Exception:  # noqa: BLE001 - the name only keys the cache
        return f"{backend.name} on ?"
    return device if cpu else f"{backend.name} on {device}"


def stored_ceilings(store: Store, env_id: str, backend: str, llc_bytes: int | None = None) -> Ceilings:
    """The store's roofs of ``backend`` in ``env_id``, with their sources; ``roof_set`` holds them typed
    (cache levels with their working sets included) for the notes on rows above a roof."""
    p = store.peak_records(env_id, backend)
    values, sources = {}, {}
    for r in p:
        if r.get("value") is None or not math.isfinite(float(r["value"])):
            continue
        key = (str(r["metric"]), str(r["dtype"]))
        values[key] = float(r["value"])
        sources[key] = source_of_method(r.get("method"))
    found = Ceilings(values, sources, llc_bytes)
    found.roof_set = roof_set_from_table(p, backend) if p else None  # type: ignore[attr-defined]
    return found


def _busy(rows: list[RowDict]) -> str:
    """Words saying the machine was busy during the probe ("" when it was not, or nobody can tell)."""
    shares = [r["other_cpu_share"] for r in rows if r.get("other_cpu_share") is not None]
    if shares and max(shares) > 0.25:
        return f"other processes used {max(shares):.0%} of the CPU"
    try:
        load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    except (OSError, AttributeError):
        return ""
    return f"load average {load:.1f} on {cpus} CPUs" if not shares and load > cpus else ""


def probe_backend(backend: Backend, worker: CellExecutor | CellWorker) -> list[Peak]:
    """The short automatic probe of the device ``backend`` runs on. The host CPU: its one roof set
    (:func:`workbench.roofs.probe.probe_cpu`, a few seconds, whatever runtime asks). Another device: through
    the harness, one saxpy at ~2× the last-level cache and one GEMM per dtype (a 256³ pilot, then, when the
    pilot is fast enough, a size taking ~``AUTO_GEMM_CALL_S`` a call; the best rate counts)."""
    device, cpu = physical_device(backend)
    if cpu:
        return peaks_of(_cpu_roofs(device), backend.name)
    worker = as_executor(worker)
    rows: list[RowDict] = []  # every cell the probe ran: were they slowed by a busy machine?
    bandwidth = _auto_bandwidth(backend, worker, rows)
    out = [bandwidth] if bandwidth is not None else []
    if bandwidth is not None:  # a GPU's L2 beside its HBM: a row whose working set fits L2 is scored against L2
        out.append(gpu_l2_peak(backend, worker, [bandwidth.details["variant"]], AUTO_CONFIG, AUTO_TIMEOUT_S, rows,
                               auto=True))
    gemms = [v for v in _candidates("gemm", backend) if v.mode != "compiled"]
    kind = "cpu" if backend.device_info().kind == "cpu" else "gpu"
    for dtype in GEMM_DTYPES:
        usable = [v for v in gemms if not v.unsupported_reason(backend, dtype)]
        flops = _auto_gemm(backend, worker, usable, dtype, kind, rows) if usable else None
        if flops is not None:
            out.append(flops)
    busy = _busy(rows)
    for p in out:
        p.details["busy"] = busy
        if busy:
            p.method += f" (machine busy: {busy})"
    return out


def _auto_bandwidth(backend: Backend, worker: CellExecutor, rows: list[RowDict]) -> Peak | None:
    """The automatic probe's bandwidth roof: the fastest of the runtime's first saxpy variants at ~2× the
    last-level cache (None when none ran); the cells it ran are added to ``rows``."""
    llc = _llc(backend) or 32 * 2**20
    n = max(AUTO_STREAM_MIN_ELEMENTS, math.ceil(AUTO_STREAM_LLC * llc / 12))
    saxpy = [v for v in _candidates("saxpy", backend)
             if v.mode != "compiled" and not v.unsupported_reason(backend, "float32")]
    # The device's roof, not one variant's: on an H200 CuPy's own saxpy (an expression with temporaries) moved
    # 1.07 TB/s where its portable kernel moved 3.06, and CuPy's rows were scored against the former (a reduction
    # read 105% of it). Each saxpy of the runtime is tried (a few tens of milliseconds each); the fastest counts.
    best: tuple[RowDict, Variant] | None = None
    for v in saxpy[:AUTO_STREAM_VARIANTS]:
        row = worker.execute(Cell.make("saxpy", v.name, backend.name, "float32", {"n": n}, v.mode), AUTO_CONFIG,
                             timeout_s=AUTO_TIMEOUT_S)
        rows.append(row)
        if row["status"] != Status.OK:
            log.info("automatic bandwidth probe on %s, saxpy/%s: %s %s", backend.name, v.name, row["status"],
                     row["message"])
        elif best is None or row["min_s"] < best[0]["min_s"]:
            best = row, v
    if best is None:
        return None
    row, v = best
    return Peak(backend.name, BANDWIDTH, "float32", row["bytes"] / row["min_s"] / 1e9, "GB/s",
                f"{AUTO_METHOD_PREFIX}: saxpy/{v.name} (STREAM triad, the fastest of "
                f"{', '.join(x.name for x in saxpy[:AUTO_STREAM_VARIANTS])}), n={n} float32, best of "
                f"{row['n_samples']}", {"variant": v.name, "n": n, "median_gbps": row["gbps"]})


def gpu_l2_peak(backend: Backend, worker: CellExecutor, variants: list[str], config: TimingConfig,
                timeout_s: float, rows: list[RowDict], auto: bool) -> Peak:
    """A GPU's L2 bandwidth roof: saxpy (its fastest variant at HBM) on one input set of half the L2 the device
    reports, hot, so every call after the first finds its arrays in L2; ``working_set_bytes`` is the L2 size, so
    a row whose working set fits there is scored against this roof, not HBM's (an L2-resident ``gelu_tanh`` read
    109% of the H100's HBM roof). Refused (value None, with the reason) without an L2 size or in ``launch`` timing
    mode, where a call of a few microseconds is its launch gaps, not L2 (as the CPU's cache roofs need numba)."""
    metric = RoofKind.L2.metric
    l2 = _llc(backend)
    if not l2:
        return Peak(backend.name, metric, "float32", None, "GB/s", "L2 bandwidth: the device reports no L2 size",
                    {})
    n = max(1024, int(L2_PROBE_SHARE * l2 / 12) // 64 * 64)
    best: RowDict | None = None
    why = []
    for name in variants:
        mode = catalog.variants("saxpy")[name].mode
        row = worker.execute(Cell.make("saxpy", name, backend.name, "float32", {"n": n}, mode),
                             dataclasses.replace(config, n_inputs=1, cache="hot"), timeout_s=timeout_s)
        rows.append(row)
        if row["status"] != Status.OK:
            why.append(f"saxpy/{name}: {row['status']} {row['message'] or ''}".strip())
        elif row.get("timing_mode") == "launch":
            why.append(f"saxpy/{name} was timed in launch mode (launch gaps included: no kernel or graph timer here)")
        elif best is None or row["min_s"] < best["min_s"]:
            best = {**row, "variant": name, "timing_mode": row.get("timing_mode")}
    if best is None:
        return Peak(backend.name, metric, "float32", None, "GB/s", "L2 bandwidth: " + "; ".join(why), {})
    return Peak(backend.name, metric, "float32", best["bytes"] / best["min_s"] / 1e9, "GB/s",
                f"{AUTO_METHOD_PREFIX + ': ' if auto else ''}saxpy/{best['variant']} on one "
                f"input set of half the L2, n={n} float32, hot, timing mode {best['timing_mode']}, best of "
                f"{best['n_samples']}", {"variant": best["variant"], "n": n, "working_set_bytes": l2,
                                         "median_gbps": best["gbps"], "timing_mode": best["timing_mode"]})


def _auto_gemm(backend: Backend, worker: CellExecutor, usable: list[Variant], dtype: str, kind: str,
               rows: list[RowDict]) -> Peak | None:
    """The automatic probe's FLOP/s roof in ``dtype``: a 256³ pilot of the library GEMM (without one, of the
    first two hand-written ones), then the fastest at a size taking ~``AUTO_GEMM_CALL_S`` a call; None when no
    pilot ran. The cells it ran are added to ``rows``."""
    row, v = None, usable[0]
    # a library GEMM is the ceiling; without one, the faster of the first two hand-written ones
    for cand in usable[:1] if usable[0].library else usable[:2]:
        r = worker.execute(_gemm_cell(backend, cand, dtype, GEMM_PILOT), AUTO_PILOT_CONFIG,
                           timeout_s=AUTO_TIMEOUT_S)
        rows.append(r)
        if r["status"] != Status.OK:
            log.info("automatic GEMM probe on %s %s/%s: %s %s", backend.name, cand.name, dtype, r["status"],
                     r["message"])
        elif row is None or r["min_s"] < row["min_s"]:
            row, v = r, cand
    if row is None:
        return None
    rate = row["flops"] / row["min_s"] / 1e9
    size = (AUTO_GEMM_CALL_S * rate * 1e9 / 2) ** (1 / 3) // GEMM_PILOT * GEMM_PILOT
    size = int(min(AUTO_GEMM_MAX[kind], size))
    if size > GEMM_PILOT:
        big = worker.execute(_gemm_cell(backend, v, dtype, size), AUTO_CONFIG, timeout_s=AUTO_TIMEOUT_S)
        rows.append(big)
        if big["status"] == Status.OK and big["flops"] / big["min_s"] > row["flops"] / row["min_s"]:
            row = big
    return Peak(backend.name, FLOPS, dtype, row["flops"] / row["min_s"] / 1e9, "GFLOP/s",
                f"{AUTO_METHOD_PREFIX}: gemm/{v.name} {row['size_label']} {dtype}, best of "
                f"{row['n_samples']}", {"variant": v.name, "params": row["params"],
                                        "median_gflops": row["gflops"]})


def _cache_file() -> Path:
    explicit = os.environ.get(ENV_CEILINGS_CACHE)
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "workbench" / "ceilings.json"


def _cached_probe(env_id: str, key: str) -> list[Peak] | None:
    """Ceilings probed earlier in this environment for ``key`` (backend and device), in this process or
    kept in the per-user cache file."""
    if (env_id, key) in _probed:
        return _probed[(env_id, key)]
    try:
        doc = json.loads(read_regular_text(_cache_file(), what="peaks cache"))
        found = doc[env_id][key]
        if not isinstance(found, dict) or found.get("probe_version") != PROBE_VERSION:
            return None  # measured by an older probe (a stale roof would judge every later sweep): probe again
        peaks = [Peak(p["backend"], p["metric"], p["dtype"], float(p["value"]), p["unit"], p["method"],
                      p.get("details") or {}) for p in found["peaks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    _probed[(env_id, key)] = peaks
    return peaks


def _remember_probe(env_id: str, key: str, peaks: list[Peak]) -> None:
    _probed[(env_id, key)] = peaks
    path = _cache_file()
    try:
        try:
            doc = json.loads(read_regular_text(path, what="peaks cache"))
            doc = doc if isinstance(doc, dict) else {}
        except (OSError, ValueError):
            doc = {}
        doc.setdefault(env_id, {})[key] = {"probe_version": PROBE_VERSION, "peaks": [
            {"backend": p.backend, "metric": p.metric, "dtype": p.dtype, "value": p.value, "unit": p.unit,
             "method": p.method, "details": p.details} for p in peaks if p.value is not None]}
        atomic_write_text(path, json.dumps(doc, indent=1, default=str))  # never renamed over a device or FIFO
    except ValueError as exc:  # $WORKBENCH_CEILINGS_CACHE names a device, a FIFO, a folder: say so, keep it
        log.warning("%s: probed ceilings not kept (%s)", ENV_CEILINGS_CACHE, exc)
    except OSError as exc:  # the store still has them; only a fresh store will probe again
        log.info("could not keep the probed ceilings in %s: %s", path, exc)


def ensure_ceilings(store: Store, env_id: str, backend: str, worker: CellExecutor | CellWorker | None = None,
                    *, probe: bool | None = None) -> Ceilings:
    """The ceilings a sweep compares ``backend``'s rows with, probing them the first time.

    Stored ceilings (``workbench peaks``, or an earlier automatic probe) are used
    as they are. Without any, a short automatic probe (:func:`probe_backend`)
    measures them — once per environment: its results are kept in a small
    per-user cache as well, so a new store in the same environment copies them
    instead of probing again — and stores them with a method starting
    ``automatic probe``. ``probe`` False (default: ``$WORKBENCH_AUTO_PEAKS``
    not 0) only reads what is stored or kept from an earlier probe (a quick
    tutorial run still shows "% of peak" once any run has probed). Never raises: a failed probe leaves the
    ceilings empty (published figures then stand in).
    """
    try:
        b = backend_registry.get(backend)
        available = b.probe().available
    except Exception:  # noqa: BLE001 - an unknown backend's cells report it themselves
        return stored_ceilings(store, env_id, backend)
    llc = _llc(b) if available else None
    found = stored_ceilings(store, env_id, backend, llc)
    if found or not available:
        return found
    key = _probe_key(b)
    try:
        peaks = _cached_probe(env_id, key)  # read even with the probe off: an earlier probe costs nothing now
        if peaks is None and not (auto_peaks_enabled() if probe is None else probe):
            return found
        if peaks is None:
            t0 = time.perf_counter()
            own = worker is None
            w = as_executor(worker, "workbench-auto-peaks")
            try:
                peaks = probe_backend(b, w)
            finally:
                if own:
                    w.close()
            log.info("automatic ceilings of %s measured in %.1f s", backend, time.perf_counter() - t0)
            if peaks and not any(p.details.get("busy") for p in peaks):
                _remember_probe(env_id, key, peaks)
            elif peaks:
                _probed[(env_id, key)] = peaks  # this process only: a quieter run may probe better
        for p in peaks:  # a copy for this backend: the probe may have run for another runtime on the device
            if p.value is not None:
                store.set_peak(env_id, backend, p.metric, p.dtype, p.value, p.unit, p.method, p.details)
            else:
                log.warning("no %s roof for %s: %s", p.metric, backend, p.method)
    except Exception:  # noqa: BLE001 - a failed probe must not stop the sweep: no ceiling is better than none
        log.exception("automatic ceilings of %s failed", backend)
    return stored_ceilings(store, env_id, backend, llc)

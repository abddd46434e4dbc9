"""This machine's ceilings per backend: streaming bandwidth and large-GEMM FLOP rate.

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
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .backends import registry as backend_registry
from .backends.base import Backend
from .catalog import registry as catalog
from .catalog.spec import Variant
from .harness.cell import Cell, CellWorker, execute_cell, prepare_backend
from .harness.throughput import BANDWIDTH, FLOPS
from .harness.timer import TimingConfig
from .store import Store, current_environment, open_store

log = logging.getLogger(__name__)

STREAM_MIN_ELEMENTS = 2**24
GEMM_DTYPES = ("float32", "float64")
GEMM_PILOT = 256
GEMM_CALL_S = 0.15
PROBE_CONFIG = TimingConfig(warmup_s=0.1, budget_s=0.5, target_spread=0.01, min_samples=5, max_samples=200,
                            n_inputs=1)
PILOT_CONFIG = TimingConfig(warmup_s=0.0, budget_s=0.0, min_samples=3, n_inputs=1)
PROBE_TIMEOUT_S = 60.0


@dataclass
class Peak:
    backend: str
    metric: str  # bandwidth_gbps | gflops
    dtype: str
    value: float | None
    unit: str
    method: str
    details: dict[str, Any]


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


def measure_backend(backend: Backend, worker: CellWorker) -> list[Peak]:
    out: list[Peak] = []
    prepare_backend(backend.name)
    n = _stream_elements(backend)
    best: dict[str, Any] | None = None
    tried = []
    for v in _candidates("saxpy", backend):
        if v.mode == "compiled" or v.unsupported_reason(backend, "float32"):
            continue
        row = execute_cell(Cell.make("saxpy", v.name, backend.name, "float32", {"n": n}, v.mode), PROBE_CONFIG,
                           worker, timeout_s=PROBE_TIMEOUT_S)
        tried.append(f"{v.name}: {row['status']}")
        if row["status"] == "ok" and (best is None or row["min_s"] < best["min_s"]):
            best = row
    if best is not None:
        gbps = best["bytes"] / best["min_s"] / 1e9
        out.append(Peak(backend.name, BANDWIDTH, "float32", gbps, "GB/s",
                        f"saxpy/{best['variant']} (STREAM triad), n={n} float32, best of {best['n_samples']}",
                        {"variant": best["variant"], "n": n, "median_gbps": best["gbps"], "tried": tried}))
    else:
        out.append(Peak(backend.name, BANDWIDTH, "float32", None, "GB/s",
                        "no saxpy variant measured: " + ("; ".join(tried) or "none for this runtime"), {}))

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
            row = execute_cell(_gemm_cell(backend, v, dtype, GEMM_PILOT), PILOT_CONFIG, worker,
                               timeout_s=PROBE_TIMEOUT_S)
            size = _gemm_size(backend, row["flops"] / row["min_s"] / 1e9) if row["status"] == "ok" else 0
        if size:
            row = execute_cell(_gemm_cell(backend, v, dtype, size), PROBE_CONFIG, worker, timeout_s=PROBE_TIMEOUT_S)
        label = f"gemm/{v.name} {row['size_label']} {dtype}"
        if row["status"] == "ok":
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
    worker = CellWorker("workbench-peaks")
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

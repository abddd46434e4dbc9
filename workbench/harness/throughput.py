"""FLOP and byte rates of a row, and how far they are from this machine's measured peaks.

Peaks come from ``workbench peaks`` (the store's peaks table, per environment and
backend); published device figures come from ``workbench.datasets``. Both are
optional: a missing peak leaves the percentage null rather than guessing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..catalog.spec import KernelSpec
from ..dtypes import itemsize

log = logging.getLogger(__name__)

BANDWIDTH = "bandwidth_gbps"
FLOPS = "gflops"

#: (metric, dtype) -> value; bandwidth peaks are stored under the dtype they were probed with.
Peaks = Mapping[tuple[str, str], float]


def work(spec: KernelSpec, params: Mapping[str, int], dtype: str) -> tuple[float, float]:
    """(FLOPs, bytes) of one call, from the spec."""
    return float(spec.flops(params)), float(spec.bytes_moved(params, itemsize(dtype)))


def bandwidth_peak(peaks: Peaks) -> float | None:
    values = [v for (metric, _), v in peaks.items() if metric == BANDWIDTH and v]
    return max(values) if values else None


def rates(flops: float, nbytes: float, seconds: float | None, dtype: str, peaks: Peaks | None = None,
          published: Mapping[str, float] | None = None, bound: str = "memory-bound") -> dict[str, Any]:
    """gflops, gbps, intensity and the percentages of peak for one median time."""
    out: dict[str, Any] = {"flops": flops, "bytes": nbytes,
                           "intensity": flops / nbytes if nbytes else None,
                           "gflops": None, "gbps": None, "pct_peak_bw": None, "pct_peak_flops": None,
                           "pct_published": None}
    if not seconds or seconds <= 0:
        return out
    gflops, gbps = flops / seconds / 1e9, nbytes / seconds / 1e9
    out["gflops"], out["gbps"] = gflops, gbps
    if peaks:
        bw = bandwidth_peak(peaks)
        fl = peaks.get((FLOPS, dtype))
        out["pct_peak_bw"] = 100.0 * gbps / bw if bw else None
        out["pct_peak_flops"] = 100.0 * gflops / fl if fl and flops else None
    if published:
        if bound == "compute-bound" and published.get(FLOPS):
            out["pct_published"] = 100.0 * gflops / published[FLOPS]
        elif bound != "compute-bound" and published.get(BANDWIDTH):
            out["pct_published"] = 100.0 * gbps / published[BANDWIDTH]
    return out


@lru_cache(maxsize=64)
def published_peak(device: str | None, dtype: str) -> dict[str, float] | None:
    """Published figures for ``device`` from ``workbench.datasets.published_peak(device, dtype)``
    (a ``(GFLOP/s, GB/s)`` pair, None where unknown); None when that module is absent or does
    not know the device."""
    try:
        from ..datasets import published_peak as lookup
    except ImportError:
        return None
    try:
        gflops, gbps = lookup(device, dtype)
    except Exception as exc:  # noqa: BLE001 - a table problem must not fail a measurement
        log.warning("published peak lookup for %r failed: %s", device, exc)
        return None
    found = {FLOPS: gflops, BANDWIDTH: gbps}
    return {k: float(v) for k, v in found.items() if v} or None

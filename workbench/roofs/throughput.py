"""FLOP and byte rates of a row, how far they are from the ceilings, and which ceilings those were.

Ceilings come from the store's peaks table (per environment and backend):
measured by ``workbench peaks``, or by the short automatic probe a sweep runs the
first time it uses a backend in an environment (:func:`workbench.roofs.peaks.ensure_ceilings`).
Where neither is known, the published device figure (``workbench.core.datasets``)
stands in. Every row names the ceilings it was compared with (``ceiling_gbps``,
``ceiling_gflops``, ``ceiling_source``), and a percentage above 100 is never
silent: ``peak_note`` says what explains it (most often a working set that fits
in the last-level cache, so the DRAM bandwidth ceiling does not apply).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache

from workbench.catalog.spec import KernelSpec
from workbench.core.datasets import published_peak
from workbench.core.dtypes import itemsize
from workbench.core.record import RowDict
from workbench.roofs.ceilings import UNROOFED, bound_note, peak_note
from workbench.roofs.model import AUTO_METHOD_PREFIX, AUTO_PROBE, MEASURED, PUBLISHED, source_of_method

log = logging.getLogger(__name__)

__all__ = ["AUTO_METHOD_PREFIX", "AUTO_PROBE", "BANDWIDTH", "FLOPS", "MEASURED", "PUBLISHED", "Ceilings", "Peaks",
           "ceilings_for", "peak_note", "published_ceilings", "rates", "source_of_method", "work"]

BANDWIDTH = "bandwidth_gbps"
FLOPS = "gflops"

#: (metric, dtype) -> value; bandwidth peaks are stored under the dtype they were probed with.
Peaks = Mapping[tuple[str, str], float]


class Ceilings(dict):
    """:data:`Peaks` that also know where each value came from and the device's last-level cache.

    ``sources`` maps (metric, dtype) to :data:`MEASURED` or :data:`AUTO_PROBE`; a
    plain mapping given to :func:`rates` counts as :data:`MEASURED`.
    """

    def __init__(self, values: Mapping[tuple[str, str], float] | None = None,
                 sources: Mapping[tuple[str, str], str] | None = None, llc_bytes: int | None = None):
        super().__init__(values or {})
        self.sources: dict[tuple[str, str], str] = dict(sources or {})
        self.llc_bytes = llc_bytes


def work(spec: KernelSpec, params: Mapping[str, int], dtype: str) -> tuple[float, float]:
    """(FLOPs, bytes) of one call, from the spec."""
    return float(spec.flops(params)), float(spec.bytes_moved(params, itemsize(dtype)))


def bandwidth_peak(peaks: Peaks) -> float | None:
    values = [v for (metric, _), v in peaks.items() if metric == BANDWIDTH and v]
    return max(values) if values else None


def _bandwidth_key(peaks: Peaks) -> tuple[str, str] | None:
    keys = [k for k, v in peaks.items() if k[0] == BANDWIDTH and v]
    return max(keys, key=lambda k: peaks[k]) if keys else None


def ceilings_for(dtype: str, peaks: Peaks | None, published: Mapping[str, float] | None
                 ) -> tuple[float | None, float | None, str | None, str | None]:
    """(GB/s, GFLOP/s, source of the GB/s, source of the GFLOP/s): measured where known, else published."""
    bw = fl = None
    bw_src = fl_src = None
    if peaks:
        sources = getattr(peaks, "sources", {}) or {}
        key = _bandwidth_key(peaks)
        if key is not None:
            bw, bw_src = float(peaks[key]), sources.get(key, MEASURED)
        if peaks.get((FLOPS, dtype)):
            fl, fl_src = float(peaks[(FLOPS, dtype)]), sources.get((FLOPS, dtype), MEASURED)
    if published:
        if bw is None and published.get(BANDWIDTH):
            bw, bw_src = float(published[BANDWIDTH]), PUBLISHED
        if fl is None and published.get(FLOPS):
            fl, fl_src = float(published[FLOPS]), PUBLISHED
    return bw, fl, bw_src, fl_src


def combined_source(bw_src: str | None, fl_src: str | None) -> str | None:
    """One ``ceiling_source`` text for the two ceilings."""
    if bw_src and fl_src and bw_src != fl_src:
        return f"{bw_src} for GB/s, {fl_src} for GFLOP/s"
    return bw_src or fl_src


def rates(flops: float, nbytes: float, seconds: float | None, dtype: str, peaks: Peaks | None = None,
          published: Mapping[str, float] | None = None, bound: str = "memory-bound",
          llc_bytes: int | None = None, chain_steps: float | None = None,
          who: Mapping[str, str] | None = None) -> RowDict:
    """gflops, gbps, intensity, the percentages of peak for one median time, and the ceilings behind them.

    A ``latency-bound`` or ``none`` kernel (``bound``) gets no % of peak; its note gives the time of one of
    its ``chain_steps`` dependent steps. Ceilings are ``peaks`` (measured; a :class:`Ceilings` says by what)
    where known, else ``published``; ``llc_bytes`` (default: ``peaks.llc_bytes``) lets a
    percentage above 100 be explained by the cache (``peak_note``); ``who``: the row's kernel and backend, which
    tell the probe's own workload (numpy's GEMM, whose reading above its roof means the probe read low).
    """
    out: RowDict = {"flops": flops, "bytes": nbytes,
                           "intensity": flops / nbytes if nbytes else None,
                           "gflops": None, "gbps": None, "pct_peak_bw": None, "pct_peak_flops": None,
                           "pct_published": None, "ceiling_gbps": None, "ceiling_gflops": None,
                           "ceiling_source": None, "peak_note": None}
    if not seconds or seconds <= 0:
        return out
    gflops, gbps = flops / seconds / 1e9, nbytes / seconds / 1e9
    out["gflops"], out["gbps"] = gflops, gbps
    if bound in UNROOFED:  # no roof to take a % of: the note says what the row is scored against
        out["peak_note"] = bound_note(bound, chain_steps, seconds)
        return out
    bw, fl, bw_src, fl_src = ceilings_for(dtype, peaks, published)
    roof_set = getattr(peaks, "roof_set", None)
    level = roof_set.cache_level_for(nbytes) if roof_set is not None else None
    if level is not None:  # the working set fits a cache whose bandwidth was measured: that level is its roof
        bw = level.value
    fl_src = fl_src if flops else None
    out.update(ceiling_gbps=bw, ceiling_gflops=fl if flops else None, ceiling_source=combined_source(bw_src, fl_src))
    out["pct_peak_bw"] = 100.0 * gbps / bw if bw else None
    out["pct_peak_flops"] = 100.0 * gflops / fl if fl and flops else None
    if llc_bytes is None:
        llc_bytes = getattr(peaks, "llc_bytes", None)
    out["peak_note"] = peak_note(out["pct_peak_bw"], out["pct_peak_flops"], nbytes, llc_bytes, bw_src, fl_src,
                                 roofs=getattr(peaks, "roof_set", None), row={**out, **(who or {}), "dtype": dtype})
    if published:
        if bound == "compute-bound" and published.get(FLOPS):
            out["pct_published"] = 100.0 * gflops / published[FLOPS]
        elif bound != "compute-bound" and published.get(BANDWIDTH):
            out["pct_published"] = 100.0 * gbps / published[BANDWIDTH]
    return out


@lru_cache(maxsize=64)
def published_ceilings(device: str | None, dtype: str) -> dict[str, float] | None:
    """The datasheet figures of ``device`` keyed like measured ceilings ({metric: value}), from
    :func:`workbench.core.datasets.published_peak` (one home for the table's ``(GFLOP/s, GB/s)`` lookup);
    None when the table does not know the device."""
    try:
        gflops, gbps = published_peak(device, dtype)
    except Exception as exc:  # noqa: BLE001 - a table problem must not fail a measurement
        log.warning("published peak lookup for %r failed: %s", device, exc)
        return None
    found = {FLOPS: gflops, BANDWIDTH: gbps}
    return {k: float(v) for k, v in found.items() if v} or None

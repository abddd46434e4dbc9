"""The metrics a figure can draw: the names a user may type for each, and the label its axis carries."""

from __future__ import annotations

#: Metric names (and friendly aliases) -> contract column or derived quantity.
METRIC_ALIASES: dict[str, str] = {
    "time": "median_s", "median_s": "median_s", "s": "median_s",
    "gb/s": "gbps", "gbps": "gbps", "bandwidth": "gbps",
    "gflop/s": "gflops", "gflops": "gflops",
    "% of peak": "pct_peak_bw", "pct_peak_bw": "pct_peak_bw", "pct_peak_flops": "pct_peak_flops",
    "pct_published": "pct_published",
    "speed-up": "speedup", "speedup": "speedup",
    "memory": "peak_mem_bytes", "peak_mem_bytes": "peak_mem_bytes",
}
#: Metric -> the label of its axis.
METRIC_LABELS: dict[str, str] = {
    "median_s": "time per call (median)", "gbps": "GB/s", "gflops": "GFLOP/s",
    "pct_peak_bw": "% of the GB/s ceiling", "pct_peak_flops": "% of the GFLOP/s ceiling",
    "pct_published": "% of published peak", "speedup": "speed-up vs baseline (x)",
    "peak_mem_bytes": "peak memory",
}

#: Metrics that are (something) / median time: their quartile band is value * median / q3 .. / q1.
INVERSE_TIME = {"gbps", "gflops", "pct_peak_bw", "pct_peak_flops", "pct_published"}


def resolve_metric(metric: str) -> str:
    """The column (or derived quantity) a metric name or alias means; an unknown one names the valid ones."""
    key = METRIC_ALIASES.get(str(metric).strip().lower())
    if key is None:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(sorted(set(METRIC_ALIASES)))}")
    return key

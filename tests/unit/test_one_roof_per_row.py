"""Issue 39, tutorial 04: the implausibility test judges a row against the roof its table names and the rate its
table prints, and the probe's own workload above its roof is the probe reading low, never implausible."""

from __future__ import annotations

import json

import numpy as np

from workbench.measure.rounds import finish_single_round, merge_rounds
from workbench.roofs.ceilings import row_peak_note
from workbench.roofs.model import AUTO_PROBE, Roof, RoofKind, RoofSet, above_top_roof


def _roofs(flops: float = 105.0) -> RoofSet:
    how = "automatic probe: BLAS GEMM (numpy.matmul, every BLAS thread) 256x256x256 float32"
    return RoofSet("cpu", [Roof("cpu", RoofKind.L1, 136.0, AUTO_PROBE, "automatic probe: triad"),
                           Roof("cpu", RoofKind.FLOPS, flops, AUTO_PROBE, how, "float32")])


def _gemm(gflops: float, backend: str = "numba", ceiling: float = 126.0) -> dict:
    return {"kernel": "gemm", "backend": backend, "dtype": "float32", "gflops": gflops,
            "ceiling_gflops": ceiling, "ceiling_source": AUTO_PROBE, "pct_peak_flops": 100 * gflops / ceiling}


def test_the_flop_test_uses_the_roof_the_row_names():
    # 04: a roof set at 105 GFLOP/s beside a row naming 126: 184 GFLOP/s is 1.46x the named roof (within 1.5x)
    assert above_top_roof(_gemm(184.0), _roofs(105.0)) is None
    why = above_top_roof(_gemm(200.0), _roofs(105.0))
    assert why is not None and "126 GFLOP/s" in why and "105" not in why and "1.6x" in why
    # with no roof set at all the row's own ceiling still judges it (a merged row)
    assert above_top_roof(_gemm(200.0), None) is not None


def test_the_probes_own_workload_above_its_roof_means_the_probe_read_low():
    row = _gemm(260.0, backend="numpy")
    assert above_top_roof(row, _roofs(126.0)) is None
    note = row_peak_note(row, roofs=_roofs(126.0))
    # one hedged cause with the row's own ratio (260 / 126), never stated as fact nor with a drift quoted from elsewhere
    assert "may have read low" in note and "2.06x" in note and "implausible" not in note
    assert "ceiling was measured low" not in note and "1.3-1.5" not in note
    # the same rate from a hand-written kernel is beyond the device
    assert above_top_roof(_gemm(260.0), _roofs(126.0)).startswith("implausible")


def _round(median: float, gflops_per_s: float, status: str = "ok", message: str | None = None, **kw) -> dict:
    samples = [median * f for f in (0.99, 1.0, 1.01)]
    row = {"status": status, "message": message, "samples_s": json.dumps(samples),
           "host_samples_s": json.dumps(samples), "median_s": float(np.median(samples)), "n_samples": 3,
           "flops": gflops_per_s * median * 1e9, "gflops": gflops_per_s, "gbps": 1.0, "pct_peak_bw": 1.0,
           "pct_peak_flops": 100 * gflops_per_s / 126.0, "ceiling_gflops": 126.0, "ceiling_gbps": 100.0,
           "ceiling_source": AUTO_PROBE, "kernel": "gemm", "backend": "numba", "dtype": "float32", **kw}
    return finish_single_round(row)


def test_a_merged_row_is_judged_on_its_pooled_median_against_its_named_roof():
    first = _round(1e-3, 150.0)
    second = _round(0.8e-3, 200.0, "implausible", "implausible: its median 200 GFLOP/s is 1.6x the peak FLOP/s roof")
    merged = merge_rounds(first, second)
    # the pooled median (median of the round medians, 0.9 ms) reads 172 GFLOP/s: 1.37x the 126 GFLOP/s roof
    assert merged["status"] == "ok" and "implausible" not in str(merged["message"])
    assert merged["gflops"] < 1.5 * merged["ceiling_gflops"]
    # a pooled median still past the margin stays implausible, its message giving the pooled rate
    fast = merge_rounds(_round(0.6e-3, 250.0, "implausible", "implausible: x"), _round(0.6e-3, 250.0))
    assert fast["status"] == "implausible" and f"{fast['gflops']:.3g} GFLOP/s" in fast["message"]


def test_a_merged_row_names_the_ceiling_its_percentages_were_taken_of():
    merged = merge_rounds(_round(1e-3, 150.0, ceiling_gflops=105.0), _round(1e-3, 150.0, ceiling_gflops=126.0,
                                                                           pct_peak_flops=100 * 150 / 126))
    assert merged["ceiling_gflops"] == 126.0
    assert abs(merged["pct_peak_flops"] - 100 * merged["gflops"] / 126.0) < 1e-6

"""The roof targets' check (issue 22): it counts what the targets forbid, and only that."""

from __future__ import annotations

import json

import pandas as pd

from workbench.report.roof_check import check_roofs
from workbench.roofs.model import AUTO_PROBE

ROOFS = (("bandwidth_gbps", "float32", 10.0), ("l1_bandwidth_gbps", "float32", 200.0),
         ("gflops", "float32", 50.0))


def _peaks(backends=("numpy", "numba"), dram=None) -> pd.DataFrame:
    rows = []
    for b in backends:
        for metric, dtype, value in ROOFS:
            value = (dram or {}).get(b, value) if metric == "bandwidth_gbps" else value
            rows.append({"env_id": "e", "backend": b, "metric": metric, "dtype": dtype, "value": value,
                         "method": "automatic probe: triad", "details": json.dumps({"device": "CPU Demo"})})
    return pd.DataFrame(rows)


def _row(variant: str, backend: str = "numpy", gbps: float = 5.0, status: str = "ok", ceiling: float | None = 10.0,
         **kw) -> dict:
    row = {"env_id": "e", "kernel": "saxpy", "variant": variant, "backend": backend, "device": "CPU Demo",
           "dtype": "float32", "size_label": "n=1", "status": status, "bound": "memory-bound", "gbps": gbps,
           "gflops": gbps / 6, "bytes": 1e9, "ceiling_gbps": ceiling, "ceiling_gflops": 50.0,
           "pct_peak_bw": None if ceiling is None else 100 * gbps / ceiling, "pct_peak_flops": None,
           "ceiling_source": AUTO_PROBE if ceiling else None, "peak_note": None}
    row.update(kw)
    return row


def test_rows_within_one_roof_set_pass():
    df = pd.DataFrame([_row("a"), _row("b", "numba", 8.0), _row("c", ceiling=None)])
    check = check_roofs(df, _peaks())
    assert check.passed, check.lines()
    assert check.timed_rows == 3 and list(check.roof_sets) == ["CPU Demo"]


def test_a_row_above_its_roof_counts_unless_it_is_marked_implausible():
    above = _row("fast", gbps=15.0)  # 150% of DRAM, under the L1 roof: above its roof, not implausible
    check = check_roofs(pd.DataFrame([above]), _peaks())
    assert not check.passed and len(check.above_unmarked) == 1 and "fast" in check.above_unmarked[0]
    marked = _row("wild", gbps=1000.0, status="implausible")  # 5x the L1 roof: the harness marked it
    check = check_roofs(pd.DataFrame([marked]), _peaks())
    assert check.passed and len(check.implausible) == 1


def test_a_runtime_with_its_own_roof_or_a_second_roof_set_counts():
    own = _row("own", "numba", 8.0, ceiling=9.0)  # numba scored against a roof its device does not have
    check = check_roofs(pd.DataFrame([_row("a"), own]), _peaks())
    assert not check.passed and len(check.foreign_roof) == 1 and "own" in check.foreign_roof[0]
    split = check_roofs(pd.DataFrame([_row("a"), _row("b", "numba", ceiling=12.0)]),
                        _peaks(dram={"numba": 12.0}))  # numba's copy of the CPU's roofs differs from numpy's
    assert not split.passed and split.devices_with_several_sets == ["CPU Demo"]

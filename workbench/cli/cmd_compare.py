"""``workbench compare``: is run B faster than run A, cell by cell, beyond the noise?"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

import pandas as pd


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("compare", help="speed-ups between two runs (or against a baseline) with CIs",
                              description="Speed-up of RUN_B over RUN_A for every cell both ran (same kernel, "
                                          "variant, backend, dtype, size, mode, cache): ratio of medians, "
                                          "bootstrap 95%% interval, Mann-Whitney p-value and a verdict. With "
                                          "one RUN and --baseline, compares each variant of that run against "
                                          "the baseline instead.")
    p.add_argument("run_a", metavar="RUN_A", help="the reference run id (or 'latest')")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", default=None, help="the run compared with it")
    p.add_argument("--store", default=None, metavar="PATH", help="results store (default: the default store)")
    p.add_argument("--baseline", default=None, metavar="VARIANT[@BACKEND]",
                   help="compare variants against this one within each run (default with one run: the "
                        "kernel's library variant)")
    p.add_argument("--json", action="store_true", help="print the table as JSON records")
    p.set_defaults(func=run)


COLUMNS = ["kernel", "variant", "backend", "dtype", "size", "speedup", "ci_low", "ci_high", "p_value", "verdict"]


def run(args: argparse.Namespace) -> int:
    from ..report.exporters import resolve_run_ids
    from ..report.plots import parse_baseline
    from ..stats_compare import compare_runs, speedup_vs_baseline
    from ..store import open_store
    from .cmd_report import _baseline

    store = open_store(args.store, must_exist=True)
    ids = resolve_run_ids(store, [args.run_a] + ([args.run_b] if args.run_b else []))
    df = store.results(run_ids=ids)
    if args.run_b and not args.baseline:
        if len(ids) < 2:
            raise ValueError("RUN_A and RUN_B are the same run; give two different runs")
        table = compare_runs(df, ids[0], ids[1])
        title = f"speed-up of {ids[1]} over {ids[0]} (> 1: {ids[1]} is faster)"
    else:
        variant, backend = parse_baseline(_baseline(args.baseline))
        table = speedup_vs_baseline(df, baseline_variant=variant, baseline_backend=backend)
        table = table[table["verdict"] != "baseline"]
        title = "speed-up over " + (args.baseline or "each kernel's library variant") + " (> 1: faster)"
    if "size_label" in table:  # the readable size ("m=64 n=64 k=64") instead of the product
        table = table.drop(columns=["size"], errors="ignore").rename(columns={"size_label": "size"})
    if args.json:
        print(json.dumps(_json_records(table), indent=1))
        return 0
    print(title)
    print(format_table(table))
    return 0


def format_table(table: pd.DataFrame) -> str:
    if table.empty:
        return "(no matching cells)"
    cols = [c for c in COLUMNS if c in table] + [c for c in ("baseline_variant", "baseline_backend", "run_id")
                                                  if c in table and table[c].nunique() > 1]
    if {"device_a", "device_b"} <= set(table) and (table["device_a"] != table["device_b"]).any() or "env_id" in table:
        cols[5:5] = ["device_a", "device_b"]  # machines differ: say which is which
    t = table[cols].copy()
    t["ci"] = [f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) else ""
               for lo, hi in zip(t.pop("ci_low"), t.pop("ci_high"), strict=True)]
    t["speedup"] = [f"{x:.3g}x" if math.isfinite(x) else "" for x in t["speedup"]]
    t["p_value"] = [f"{p:.2g}" if math.isfinite(p) else "" for p in t["p_value"]]
    order = [c for c in t.columns if c not in ("ci", "p_value", "verdict")] + ["ci", "p_value", "verdict"]
    return t[order].to_string(index=False)


def _json_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(table.to_json(orient="records", double_precision=15))

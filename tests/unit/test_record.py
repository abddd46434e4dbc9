"""The measurement record: documented column for column, migrated into old stores, and enough on its own
to judge stored rows (baseline, memory- or compute-bound) without this machine's catalog."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pandas as pd

from workbench.core.record import RESULT_COLUMNS, STATUSES, Row, empty_row
from workbench.judge import compare as sc
from workbench.report.exporters import _throughput_metric
from workbench.report.sample_data import synthetic_results
from workbench.store.database import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "measurement-record.md"


def documented_columns() -> list[str]:
    """Column names from the first cell of each row of the doc's table (several names share a row)."""
    names = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*([a-z_0-9, ]+?)\s*\|", line)
        if m and m.group(1) != "column":
            names += [n.strip() for n in m.group(1).split(",")]
    return names


def test_documented_columns_are_the_record_columns():
    assert documented_columns() == list(RESULT_COLUMNS)
    assert "first_call_s" in RESULT_COLUMNS and {"library", "bound"} <= set(RESULT_COLUMNS)


def test_row_is_typed_and_round_trips():
    row = Row.from_mapping({**empty_row(), "kernel": "saxpy", "library": True, "not_a_column": 1})
    assert row.kernel == "saxpy" and row.library is True and list(row.to_dict()) == list(RESULT_COLUMNS)
    assert STATUSES == ("ok", "incorrect", "unsupported", "oom", "error", "timeout", "crashed")


def test_old_store_without_new_columns_loads(tmp_path):
    """A store written before library/bound existed gains them (empty) and its rows load."""
    old_cols = [c for c in RESULT_COLUMNS if c not in ("library", "bound", "first_call_s")]
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT)")   # a workbench store: runs too
    con.execute(f"CREATE TABLE results ({', '.join(old_cols)}, extra TEXT, UNIQUE(run_id, cell_key))")
    con.execute("INSERT INTO results (run_id, cell_key, kernel, variant, status) VALUES ('r', 'k', 'saxpy', "
                "'numpy', 'ok')")
    con.commit()
    con.close()
    df = Store(path).results()
    assert len(df) == 1 and df.loc[0, "kernel"] == "saxpy"
    assert {"library", "bound", "first_call_s"} <= set(df.columns) and df["library"].isna().all()


def test_baseline_is_judged_by_the_rows_not_the_catalog():
    """An imported run that marks a variant as its library baseline keeps it, whatever this catalog says."""
    df = synthetic_results("r1")
    saxpy = df["kernel"] == "saxpy"
    df.loc[saxpy, "library"] = df.loc[saxpy, "variant"] == "numba_parallel"
    t = sc.speedup_vs_baseline(df)
    assert set(t.loc[t["kernel"] == "saxpy", "baseline_variant"]) == {"numba_parallel"}
    assert set(t.loc[t["kernel"] == "gemm", "baseline_variant"]) == {"numpy"}


def test_rows_without_the_library_column_fall_back_to_the_first_variant():
    df = synthetic_results("r1").drop(columns=["library"])
    df = df[df["variant"] != "numpy"]
    t = sc.speedup_vs_baseline(df)
    assert set(t.loc[t["kernel"] == "saxpy", "baseline_variant"]) == {"numba_parallel"}


def test_throughput_metric_from_the_rows_bound_else_intensity():
    df = synthetic_results("r1")
    gemm, saxpy = df[df["kernel"] == "gemm"], df[df["kernel"] == "saxpy"]
    assert _throughput_metric(gemm) == "gflops" and _throughput_metric(saxpy) == "gbps"
    # a kernel this catalog calls memory-bound, recorded elsewhere as compute-bound: the row wins
    assert _throughput_metric(saxpy.assign(bound="compute-bound")) == "gflops"
    # old rows (no bound): judged by arithmetic intensity
    assert _throughput_metric(gemm.assign(bound=None)) == "gflops"
    assert _throughput_metric(pd.DataFrame(saxpy).drop(columns=["bound"])) == "gbps"

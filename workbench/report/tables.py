"""Compact per-kernel tables: sizes down, variant@backend across, one time unit, best in bold.

In the spirit of torch.utils.benchmark's ``Compare``: a reader scans one row to see who wins at a size
and one column to see how a variant scales, without 230 lines of repeated kernel names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from workbench.core.frames import records as frame_records
from workbench.core.frames import where_rows
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.core.units import fmt_in_unit, pick_time_unit
from workbench.judge.disturbed import cell_disturbed
from workbench.report.styles import series_key
from workbench.roofs.ceilings import is_noisy

NOISY_MARK = "~"


def _columns(k: pd.DataFrame, reference: tuple[str, str] | None) -> list[str]:
    """Series in order: the reference first, then by median time over the sizes (fastest first)."""
    ok = where_rows(k, k["status"] == Status.OK)
    keys = [series_key(v, b) for v, b in dict.fromkeys(zip(k["variant"], k["backend"], strict=True))]
    speed = {}
    for key in keys:
        v, _, b = key.partition(" @ ")
        t = pd.to_numeric(ok[(ok["variant"] == v) & (ok["backend"] == b)]["median_s"], errors="coerce")
        speed[key] = float(np.exp(np.log(t).mean())) if t.notna().any() else np.inf
    ref = series_key(*reference) if reference else None
    return sorted(keys, key=lambda c: (c != ref, speed[c], c))


#: The columns a pivot reads from a row.
PIVOT_COLUMNS = ("run_id", "dtype", "cache", "_size", "params", "size_label", "llm_shape", "variant", "backend",
                 "status", "median_s", "message", "noisy", "rel_spread", "noise_note", "timing_mode",
                 "iqr_s", "q1_s", "q3_s")
#: A disturbed cell's text and hover title: no median, as the tutorials' tables (report.marked_times) and the
#: figures' crosses read it (the report's pivot printed "~50.4" for a cell its figure drew as x's at its quartiles)
DISTURBED_TEXT = "disturbed"
DISTURBED_TITLE = "its quartiles lie half its median or more apart: its median is no value to read"


class PivotCell(TypedDict):
    """One cell of a kernel's compact table: its time (or status) as shown, and how it is marked."""

    text: str
    best: bool
    noisy: bool
    status: str
    #: The tooltip: the failure message, the noise note, or "not run".
    title: str


class PivotRow(TypedDict):
    """One row of a kernel's compact table: what it is (run, dtype, size as they vary) and a cell per series."""

    index: list[str]
    cells: list[PivotCell]


class Pivot(TypedDict):
    """A kernel's compact table (see :func:`pivot`)."""

    unit: str
    columns: list[str]
    index_names: list[str]
    rows: list[PivotRow]
    n_rows: int
    note: str
    #: The timing mode of every timed cell when they share one ("kernel"), else "" (then :attr:`modes` says).
    timing_mode: str
    #: Per column, the timing mode(s) of its timed cells ("host", "kernel / launch"; "" where none is known).
    modes: list[str]


def pivot(k: pd.DataFrame, reference: tuple[str, str] | None = None,
          run_names: Mapping[str, str] | None = None, max_rows: int | None = None) -> Pivot:
    """One kernel's rows as {unit, columns, index_names, rows, n_rows, note}; each row has ``index`` (run,
    dtype, size as they vary) and ``cells`` (text, best, noisy, status, title). Unsupported pairs get no
    column. ``max_rows``: at most that many rows (``n_rows`` counts them all; ``note`` says so, else "")."""
    k = k[k["status"] != Status.UNSUPPORTED] if "status" in k else k
    if k.empty:
        return {"unit": "", "columns": [], "index_names": [], "rows": [], "n_rows": 0, "note": "", "timing_mode": "",
                "modes": []}
    unit, scale = pick_time_unit(k.loc[k["status"] == Status.OK, "median_s"])
    columns = _columns(k, reference)
    index_cols = [c for c in ("run_id", "dtype", "cache") if c in k and k[c].nunique(dropna=False) > 1]
    k = k.assign(_size=pd.to_numeric(k["size"], errors="coerce"))
    group_cols = [*index_cols, "_size", "params"]
    # each row read once as a plain dict, then taken group by group (sorted by the group's key): a sub-frame
    # and a row Series per group cost most of a large report's time
    codes = k.groupby(group_cols, sort=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1) if len(k) else []
    shown = groups if max_rows is None else groups[:max_rows]
    # only the shown groups' rows, in group order, and only the columns read
    records = frame_records(k.iloc[np.concatenate(shown) if shown else np.empty(0, int)], PIVOT_COLUMNS)
    rows: list[PivotRow] = []
    start = 0
    for members in shown:
        g, start = records[start:start + len(members)], start + len(members)
        key = tuple(g[0][c] for c in group_cols)
        index = [str((run_names or {}).get(str(v), v)) if c == "run_id" else str(v)
                 for c, v in zip(index_cols, key, strict=False)]
        size = str(g[0]["size_label"]) if "size_label" in k else str(key[-1])
        shapes = [r["llm_shape"] for r in g if not pd.isna(r["llm_shape"])] if "llm_shape" in k else []
        index.append(f"{size} ({shapes[0]})" if shapes else size)  # the LLM model shape it came from
        times, wide = {}, set()
        by_key: dict[str, RowDict] = {}
        for r in g:
            ck = series_key(r["variant"], r["backend"])
            by_key[ck] = r
            if r["status"] == Status.OK:
                if cell_disturbed(r["median_s"], r.get("iqr_s"), r.get("q1_s"), r.get("q3_s")):
                    wide.add(ck)   # no median to read: never the fastest, no time printed
                else:
                    times[ck] = float(r["median_s"])
        best = min(times, key=times.get) if times else None
        cells = _pivot_cells(columns, by_key, wide, best, scale)
        rows.append({"index": index, "cells": cells})
    names = [{"run_id": "run", "dtype": "dtype", "cache": "cache"}[c] for c in index_cols] + ["size"]
    note = (f"the first {len(rows):,} of {len(groups):,} rows are shown (every cell is in the CSV of all rows)"
            if len(rows) < len(groups) else "")
    shared, modes = column_modes(k, columns)
    return {"unit": unit, "columns": columns, "index_names": names, "rows": rows, "n_rows": len(groups),
            "note": note, "timing_mode": shared, "modes": modes}


def _pivot_cells(columns: list[str], by_key: Mapping[str, RowDict], wide: set[str], best: str | None,
                 scale: float) -> list[PivotCell]:
    """One pivot row's cells: "" where not run, the status where not ok, "disturbed" (no median) for a cell whose
    quartiles lie half its median apart (``wide``), else its median in the table's unit, ``best`` in bold."""
    cells: list[PivotCell] = []
    for c in columns:
        r = by_key.get(c)
        if r is None:
            cells.append({"text": "", "best": False, "noisy": False, "status": "", "title": "not run"})
        elif r["status"] != Status.OK:
            cells.append({"text": str(r["status"]), "best": False, "noisy": False, "status": str(r["status"]),
                          "title": str(r.get("message") or "")[:200]})
        elif c in wide:
            cells.append({"text": DISTURBED_TEXT, "best": False, "noisy": False, "status": Status.OK,
                          "title": DISTURBED_TITLE})
        else:
            noisy = bool(is_noisy(r))
            cells.append({"text": fmt_in_unit(r["median_s"], scale), "best": c == best, "noisy": noisy,
                          "status": Status.OK, "title": str(r.get("noise_note") or "") if noisy else ""})
    return cells


def column_modes(k: pd.DataFrame, columns: list[str]) -> tuple[str, list[str]]:
    """(the timing mode every timed row shares, or ""; each column's mode(s) joined by " / ", "" where unknown):
    a table says once which time its cells hold, or per column where a CPU's host time sits beside a GPU's
    kernel time (issue 37: a row's time names its mode). Rows stored before modes were recorded say nothing."""
    if "timing_mode" not in k:
        return "", [""] * len(columns)
    ok = k[(k["status"] == Status.OK) & k["timing_mode"].notna()]
    per: dict[str, set[str]] = {}
    for v, b, m in zip(ok["variant"], ok["backend"], ok["timing_mode"], strict=True):
        per.setdefault(series_key(v, b), set()).add(str(m))
    everything = set().union(*per.values()) if per else set()
    shared = next(iter(everything)) if len(everything) == 1 else ""
    return shared, [" / ".join(sorted(per.get(c, ()))) for c in columns]


_MD_BACKSLASHED = re.compile(r"([\\`|\[\]])")


def md_escape(v: Any) -> str:
    """Text safe anywhere in Markdown (a table cell, a heading, a list item): backslashes, backticks, pipes
    and brackets backslash-escaped, ``& < >`` as entities (no HTML gets through), line breaks as spaces."""
    s = _MD_BACKSLASHED.sub(r"\\\1", str(v)).replace("\r", " ").replace("\n", " ")
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pivot_markdown(p: Pivot) -> str:
    """The pivot as a pipe table: best in bold, noisy cells marked ~ (as nvbench's Markdown tables)."""
    if not p["rows"]:
        return "_nothing measured_\n"
    per_column = not p.get("timing_mode") and any(p.get("modes", []))
    head = [md_escape(c) for c in p["index_names"]] + [
        md_escape(f"{c} [{m}]" if per_column and m else c) for c, m in zip(p["columns"], p.get("modes") or
                                                                            [""] * len(p["columns"]), strict=True)]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(p["index_names"]) +
                                                         ["---:"] * len(p["columns"])) + "|"]
    for r in p["rows"]:
        cells = [(NOISY_MARK if c["noisy"] else "") + (f"**{md_escape(c['text'])}**" if c["best"]
                                                        else md_escape(c["text"]))
                 for c in r["cells"]]
        lines.append("| " + " | ".join([*(md_escape(i) for i in r["index"]), *cells]) + " |")
    note = f" {md_escape(p['note'][0].upper() + p['note'][1:])}." if p.get("note") else ""
    return ("\n".join(lines) + f"\n\nTimes in {md_escape(p['unit'])} (median per call{mode_words(p)}); best per row "
            f"in bold; ~ noisy.{note}\n")


def mode_words(p: Pivot) -> str:
    """The table's line on its timing mode: ", timing mode kernel" when every cell shares one, else the pointer
    to the column headers' [mode] ("" when no row recorded one)."""
    if p.get("timing_mode"):
        return f", timing mode {md_escape(p['timing_mode'])}"
    return f", timing mode in {md_escape('[brackets]')} per column" if any(p.get("modes", [])) else ""

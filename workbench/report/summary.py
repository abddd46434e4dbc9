"""The report's tables as text: one line per cell, runs, failures, speed-ups over the reference, and the
lines that count noisy cells and cells above a ceiling. Built once by :mod:`workbench.report.model`; the
CLI prints :func:`summary_table` too."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.core.frames import split_by
from workbench.core.record import JsonObject
from workbench.core.status import Status
from workbench.core.units import fmt_bytes, fmt_seconds, interval_label
from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.disturbed import CELL_RULE, cell_disturbed, cell_hint
from workbench.judge.verdicts import is_disturbed, parse_samples, pct, verdict_label
from workbench.report.findings import is_default_reference, parse_reference, pick_reference
from workbench.report.reference_checks import ReferenceChecks
from workbench.report.row_notes import fmt_num, row_notes, text_of, value_of
from workbench.report.styles import foreign_runtime, parse_baseline
from workbench.roofs.model import RoofKey, RoofSet

if TYPE_CHECKING:
    from workbench.report.data import ReportData

#: The summary table's columns (what the CLI prints and reports show).
SUMMARY_COLUMNS = ["kernel", "variant", "backend", "dtype", "size", "status", "median ± IQR", "GB/s", "GFLOP/s",
                   "% peak", "ceiling", "peak memory", "max error", "timer", "timing mode", "notes"]
#: Markers: a noisy cell (before its time) and a % of peak above 100 (after it, explained in the notes).
NOISY_MARK, PEAK_MARK = "~", "⚠"
def backend_label(backend: object, runtime: object) -> object:
    """The backend column's text: the backend, and where the code ran on another runtime than the backend's
    (a ``quick()`` callable compiled by numba and given numpy arrays) that runtime too: ``numpy (numba code)``."""
    rt = foreign_runtime(backend, runtime)
    return f"{backend} ({rt} code)" if rt else backend


def summary_table(df: pd.DataFrame, environments: Mapping[str, JsonObject] | None = None,
                  notes: pd.DataFrame | None = None, roofs: Mapping[RoofKey, RoofSet] | None = None) -> pd.DataFrame:
    """The compact, human-formatted table (one line per cell) that the CLI prints and reports show.

    "% peak" is the share of the ceiling that bounds the kernel (GFLOP/s for compute-bound kernels, GB/s
    for memory-bound ones), "ceiling" names it and where it came from; a noisy cell's time starts with
    ``~`` and a % of peak above 100 ends with ``⚠``, both explained under "notes". A time whose IQR (or quartiles)
    span half its median or more (:func:`~workbench.judge.disturbed.cell_disturbed`, the figure's cross) prints no
    median, "±", rate or % peak: it reads "disturbed", its note says why and how to rerun.
    ``roofs`` (default: :func:`~workbench.roofs.model.resolve_roofs` of the rows) names each ceiling's level.
    """
    notes = row_notes(df, environments, roofs) if notes is None else notes
    rows = []
    for (_, r), (_, n) in zip(df.iterrows(), notes.iterrows(), strict=True):
        # a cell that failed a check after timing keeps its samples in the store, but its time is not a result
        timed = r.get("status") in (Status.OK, Status.IMPLAUSIBLE)
        med, iqr = (value_of(r, "median_s"), value_of(r, "iqr_s")) if timed else (None, None)
        time_text = (f"{fmt_seconds(med, '')} ± {fmt_seconds(iqr, '')}" if med is not None and iqr is not None
                     else fmt_seconds(med, ""))
        # past ±50% no "±" is printed (issue 39): a spread that wide informs nothing, the cell reads disturbed
        # the one cell rule the figure's crosses and the sentences follow (judge.disturbed.cell_disturbed)
        spread = med is not None and cell_disturbed(med, iqr, value_of(r, "q1_s"), value_of(r, "q3_s"))
        if spread:   # no median and no rate as a value: the figure draws the cell as a cross, "no value to read"
            time_text = "disturbed"
        rated = timed and not spread
        pct = n["pct"] if n["pct"] is not None and not pd.isna(n["pct"]) else None
        rows.append({
            "kernel": r.get("kernel"), "variant": r.get("variant"),
            "backend": backend_label(r.get("backend"), r.get("runtime")),
            "dtype": r.get("dtype"), "size": r.get("size_label") or r.get("size"), "status": r.get("status"),
            "median ± IQR": f"{NOISY_MARK} {time_text}" if n["noisy"] and time_text else time_text,
            "GB/s": fmt_num(r.get("gbps")) if rated else "", "GFLOP/s": fmt_num(r.get("gflops")) if rated else "",
            "% peak": (fmt_num(pct) + (f" {PEAK_MARK}" if n["peak_note"] else "")) if pct is not None and rated
            else "",
            "ceiling": n["ceiling"],
            "peak memory": fmt_bytes(value_of(r, "peak_mem_bytes")), "max error": fmt_num(r.get("max_error"), 2),
            "timer": r.get("timer_kind") or "",
            "timing mode": text_of(r.get("timing_mode")),
            "notes": "; ".join(x for x in (_disturbed_note(r) if spread else "",
                                           f"{NOISY_MARK} noisy: {n['noise_note']}" if n["noisy"] else "",
                                           f"{PEAK_MARK} {n['peak_note']}" if n["peak_note"] else "",
                                           n["exec_cache"]) if x),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _disturbed_note(r: pd.Series) -> str:
    """Why a cell's time reads "disturbed" (:data:`~workbench.judge.disturbed.CELL_RULE`), and how to
    rerun: on a quieter machine where its row saw a busy one."""
    share = value_of(r, "other_cpu_share")
    busy = None if share is None else share > BUSY_CPU_SHARE
    rounds = parse_samples(r.get("round_medians_s"))   # rounds that agree on an idle machine: no more rounds
    spread = float(rounds.max() / rounds.min()) if len(rounds) > 1 and rounds.min() > 0 else float("nan")
    return f"disturbed: {CELL_RULE}; {cell_hint(busy, spread)}"


def noise_summary(df: pd.DataFrame, notes: pd.DataFrame | None = None, listed: int = 5) -> str:
    """"3 of 40 cells were noisy: ..." (empty when no ok cell was)."""
    notes = row_notes(df) if notes is None else notes
    ok = df["status"] == Status.OK if "status" in df else pd.Series(False, index=df.index)
    mask = (notes["noisy"].astype(bool) & ok).to_numpy()
    n_noisy = int(mask.sum())
    if not n_noisy:
        return ""
    noisy = df.iloc[mask.nonzero()[0][:listed]]  # the rows named, not a copy of every noisy row
    names = [f"{r.get('kernel')}/{r.get('variant')} @ {r.get('backend')} {r.get('size_label') or ''}".strip()
             + (f" ({notes.loc[i, 'noise_note']})" if notes.loc[i, "noise_note"] else "")
             for i, r in noisy.iterrows()]
    more = f", and {n_noisy - listed} more" if n_noisy > listed else ""
    return (f"{n_noisy} of {int(ok.sum())} measured cells were noisy (marked {NOISY_MARK}; hollow markers in "
            f"the plots): " + "; ".join(names) + more)


def peak_summary(df: pd.DataFrame, notes: pd.DataFrame | None = None) -> list[str]:
    """Lines on the ceilings behind "% peak": where they came from, and how many rows went above 100%."""
    notes = row_notes(df) if notes is None else notes
    ok = (df["status"] == Status.OK) if "status" in df else pd.Series(False, index=df.index)
    n_ok = int(ok.sum())
    if not n_ok:
        return []
    sources = notes.loc[ok, "ceiling_source"].replace("", "no ceiling known").value_counts()
    lines = ["Ceilings behind % of peak: " + ", ".join(f"{k} for {v} of {n_ok} cells" for k, v in sources.items())]
    flagged = ok & (notes["peak_note"] != "")
    implausible = flagged & notes["peak_note"].str.startswith("implausible")
    n_implausible = int(implausible.sum() + (df["status"] == Status.IMPLAUSIBLE).sum())
    if n_implausible:
        lines.append(f"{n_implausible} cells are implausible: faster than the device's top roof (L1 "
                     "bandwidth or peak FLOP/s) allows, which no cache explains; their timing, work count or "
                     "result is wrong.")
    above = flagged & ~implausible
    if int(above.sum()):
        within = int((above & notes["peak_note"].str.contains("stays under that level's measured")).sum())
        lines.append(f"{int(above.sum())} cells are above 100% of a ceiling (marked {PEAK_MARK}); each note says "
                     f"why: {within} of them stay under the measured ceiling of the cache level that holds their "
                     "working set, the rest have no measured explanation (the ceiling or the timing is suspect).")
    return lines


def verdict_counts(verdicts: Iterable[Any]) -> dict[str, int]:
    """How many speed-ups got each verdict (faster / same / slower / ambiguous ...), in that order."""
    order = ["faster", "faster, disturbed", "same", "slower", "slower, disturbed", "inconclusive", "disturbed",
             "ambiguous"]
    counts: dict[str, int] = {}
    for v in verdicts:
        v = text_of(v)
        if v and v != "baseline":
            counts[v] = counts.get(v, 0) + 1
    return {k: counts[k] for k in sorted(counts, key=lambda k: (order.index(k) if k in order else 99, k))}


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    if "status" not in df or df.empty:
        return {}
    return {str(k): int(v) for k, v in df["status"].value_counts().items()}


#: Which cells :func:`failures_table` lists.
FAILED_CELLS, UNSUPPORTED_CELLS, NOT_OK_CELLS = "failed", "unsupported", "not ok"


def failures_table(df: pd.DataFrame, which: str = FAILED_CELLS) -> pd.DataFrame:
    """Cells with their status and reason: by default those that ran and did not pass (incorrect, error,
    timeout, crashed, oom, implausible); unsupported cells are not failures (the variant does not apply),
    listed with ``which="unsupported"``; ``which="not ok"`` lists both."""
    cols = ["kernel", "variant", "backend", "dtype", "size", "status", "reason", "traceback"]
    if "status" not in df:
        bad = df.iloc[0:0]
    elif which == UNSUPPORTED_CELLS:
        bad = df[df["status"] == Status.UNSUPPORTED]
    elif which == NOT_OK_CELLS:
        bad = df[df["status"] != Status.OK]
    else:
        bad = df[~df["status"].isin([Status.OK, Status.UNSUPPORTED])]
    rows = [{"kernel": r.get("kernel"), "variant": r.get("variant"), "backend": r.get("backend"),
             "dtype": r.get("dtype"), "size": r.get("size_label") or r.get("size"), "status": r.get("status"),
             "reason": text_of(r.get("message")), "traceback": text_of(r.get("traceback"))}
            for _, r in bad.iterrows()]
    return pd.DataFrame(rows, columns=cols)


def speedup_table(df: pd.DataFrame, baseline: Any = None, checks: ReferenceChecks | None = None,
                  judged: pd.DataFrame | None = None) -> pd.DataFrame:
    """Formatted speed-ups against the baseline (default: each kernel's library variant); ``checks``: the
    report's :class:`ReferenceChecks` (of a frame holding ``df``'s rows), else one of ``df``; ``judged``:
    :func:`speedup_vs_baseline` of ``df`` against that baseline when already computed."""
    variant, backend = parse_baseline(baseline)
    t = judged if judged is not None else speedup_vs_baseline(df, baseline_variant=variant, baseline_backend=backend)
    t = t[t["verdict"] != "baseline"]
    out = pd.DataFrame({
        "kernel": t["kernel"], "variant": t["variant"], "backend": t["backend"], "dtype": t["dtype"],
        "size": t["size_label"],
        "baseline": t["baseline_variant"].fillna("") + " @ " + t["baseline_backend"].fillna(""),
        "speed-up": [fmt_num(x) for x in t["speedup"]],
    })
    floors = pd.to_numeric(t["floor"], errors="coerce").to_numpy()
    # past ±50% an interval cannot inform: no interval and no floor, the verdict reads "disturbed"
    shown = [np.isfinite(f) and not is_disturbed(f) for f in floors]
    out[interval_label(t.get("coverage"))] = [f"{fmt_num(lo)} – {fmt_num(hi)}" if np.isfinite(lo) and ok else ""
                                              for lo, hi, ok in zip(t["ci_low"], t["ci_high"], shown, strict=True)]
    # the smallest effect each comparison could have seen (for "same": the bound its interval lies within)
    out["could see"] = [f"±{pct(f)}" if ok else "" for f, ok in zip(floors, shown, strict=True)]
    bases = t["basis"] if "basis" in t else [None] * len(t)   # too few rounds at speed reads so, not "disturbed"
    out["verdict"] = [verdict_label(str(v), f, b) if is_disturbed(f) else v
                      for v, f, b in zip(t["verdict"], floors, bases, strict=True)]
    off = _reference_offs(df, t, checks)
    if any(off):  # a reference time off its own other evidence: every speed-up over it inherits the error
        out["reference"] = [f"⚠ {why}" if why else "" for why in off]
    return out.reset_index(drop=True)


def _reference_offs(df: pd.DataFrame, t: pd.DataFrame, checks: ReferenceChecks | None = None) -> list[str]:
    """Why the reference time behind each speed-up in ``t`` is suspect ("" when it is not), each reference
    judged once (:class:`ReferenceChecks` of ``df``, or the report's ``checks``)."""
    checks = checks if checks is not None else ReferenceChecks(df)
    seen: dict[tuple, str] = {}
    out = []
    run_ids = t["run_id"].tolist() if "run_id" in t else [None] * len(t)
    for key in zip(t["kernel"], t["baseline_variant"], t["baseline_backend"], t["dtype"], t["params"], run_ids,
                   strict=True):
        if key not in seen:
            ref = checks.first_row(key[:4], key[4], key[5])
            seen[key] = (checks.anomaly(ref) or "") if ref is not None else ""
        out.append(seen[key])
    return out


def reference_speedups(ok: pd.DataFrame, baseline: Any = None) -> pd.DataFrame:
    """:func:`speedup_table` with every kernel against the one reference of the report (see
    :func:`workbench.report.findings.pick_reference`), never a per-backend mix."""
    variant, backend = parse_reference(baseline)
    tables = []
    for kernel in dict.fromkeys(ok["kernel"]):
        k = ok[ok["kernel"] == kernel]
        ref = pick_reference(k, variant, backend, fallback=is_default_reference(baseline))
        tables.append(speedup_table(k, {"variant": ref[0], "backend": ref[1]} if ref else baseline))
    return pd.concat(tables, ignore_index=True) if tables else speedup_table(ok, baseline)


#: The columns of a run's rows that :func:`runs_table` reads.
RUNS_TABLE_COLUMNS = ("run_id", "wall_s", "device", "started_at", "env_id", "status")


def runs_table(data: ReportData) -> pd.DataFrame:
    """One line per run: name, start, host, devices, wall time, cells and their statuses."""
    df, runs = data.df, data.runs
    out = []
    # each run's rows found once, not a filter per run; only the columns read here (every column of a million
    # rows, taken run by run, was a copy of the report's frame)
    narrow = df[[c for c in RUNS_TABLE_COLUMNS if c in df]]
    by_run = split_by(narrow, "run_id") if "run_id" in df else {}
    for rid in data.run_ids or list(dict.fromkeys(df.get("run_id", []))):
        rows = by_run.get(rid, df.iloc[0:0]) if "run_id" in df else df
        rec = runs[runs["run_id"] == rid].iloc[0].to_dict() if len(runs) and "run_id" in runs and \
            (runs["run_id"] == rid).any() else {}
        wall = rec.get("wall_s")
        if wall is None or (isinstance(wall, float) and math.isnan(wall)):
            wall = pd.to_numeric(rows.get("wall_s", pd.Series(dtype=float)), errors="coerce").sum()
        devices = ", ".join(str(d) for d in dict.fromkeys(rows.get("device", pd.Series(dtype=str)).dropna()))
        started = rec.get("created_at") or (rows["started_at"].dropna().min() if "started_at" in rows and len(rows)
                                            else "")
        out.append({"run": rid, "name": text_of(rec.get("name") or rec.get("suite") or ""), "started": text_of(started),
                    "host": _host(data, rec, rows), "devices": devices, "wall time":
                    fmt_seconds(float(wall or 0), ""),
                    "cells": len(rows),
                    "status": ", ".join(f"{k}: {v}" for k, v in status_counts(rows).items())})
    return pd.DataFrame(out, columns=["run", "name", "started", "host", "devices", "wall time", "cells", "status"])


def _host(data: ReportData, run: JsonObject, rows: pd.DataFrame) -> str:
    env_ids = [run.get("env_id")] + (list(dict.fromkeys(rows["env_id"].dropna())) if "env_id" in rows else [])
    hosts = []
    for e in dict.fromkeys(x for x in env_ids if x):
        host = (data.environments.get(str(e)) or {}).get("host")
        if isinstance(host, dict):
            hosts.append(" ".join(str(host[k]) for k in ("hostname", "cpu_model") if host.get(k)))
    return ", ".join(h for h in hosts if h)



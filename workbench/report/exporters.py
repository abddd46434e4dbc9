"""Write runs out as one self-contained HTML page, Markdown, JSON (importable) or CSV.

Input is either a results store (which also knows runs, environments and
measured peaks) or a bare tidy DataFrame. The HTML page embeds its figures as
PNG data URIs and its CSS inline and links to nothing outside itself, so it can
be mailed, archived or opened offline and still show everything; every string
that came from a user (kernel, variant, run names, messages) is escaped by
jinja2's autoescaping.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .row_notes import _SHORT_SOURCE, _f, _text, fmt_num, row_notes  # noqa: F401 - re-exported

FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json", ".csv": "csv"}

# -- gathering ---------------------------------------------------------------------------------


@dataclass
class ReportData:
    """Everything a report shows: rows, run records, environment records and measured peaks."""

    df: pd.DataFrame
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)
    peaks: pd.DataFrame = field(default_factory=pd.DataFrame)
    run_ids: list[str] = field(default_factory=list)


def resolve_run_ids(store_or_df: Any, run_ids: str | Iterable[str] | None) -> list[str] | None:
    """Run ids as given, with ``latest`` replaced; unknown ids raise ValueError naming the valid ones."""
    if run_ids is None:
        return None
    wanted = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    if not wanted:
        return None
    known = known_run_ids(store_or_df)
    out = []
    for r in wanted:
        if r == "latest":
            if not known:
                raise ValueError("no runs recorded yet, so there is no 'latest' run")
            # one meaning of "latest" for report, export and bench: Store.latest_run_id
            latest = getattr(store_or_df, "latest_run_id", None)
            r = latest() if callable(latest) else known[-1]
        elif r not in known:
            raise ValueError(f"unknown run id {r!r}; valid run ids: {', '.join(known) or '(none)'} (or 'latest')")
        out.append(r)
    return list(dict.fromkeys(out))


def known_run_ids(store_or_df: Any) -> list[str]:
    """Run ids, oldest first."""
    if isinstance(store_or_df, pd.DataFrame):
        return [str(r) for r in dict.fromkeys(store_or_df["run_id"])] if "run_id" in store_or_df else []
    runs = store_or_df.runs()
    if runs is None or len(runs) == 0:
        return []
    for col in ("started_at", "created_at"):
        if col in runs:
            runs = runs.sort_values(col, kind="stable")
            break
    return [str(r) for r in runs["run_id"]]


def gather(store_or_df: Any, run_ids: str | Iterable[str] | None = None) -> ReportData:
    ids = resolve_run_ids(store_or_df, run_ids)
    if isinstance(store_or_df, ReportData):
        return store_or_df
    if isinstance(store_or_df, pd.DataFrame):
        df = store_or_df if ids is None else store_or_df[store_or_df["run_id"].isin(ids)]
        return ReportData(df.reset_index(drop=True), run_ids=ids or known_run_ids(df))
    store = store_or_df
    df = store.results(run_ids=ids)
    if ids is None:
        ids = [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df else []
    runs = store.runs()
    if runs is not None and len(runs) and "run_id" in runs:
        runs = runs[runs["run_id"].isin(ids)].reset_index(drop=True)
    envs = {}
    for env_id in (dict.fromkeys(df["env_id"].dropna()) if "env_id" in df else []):
        try:
            envs[str(env_id)] = store.environment(env_id)
        except (KeyError, ValueError, LookupError):
            envs[str(env_id)] = {"env_id": env_id, "note": "environment record missing from the store"}
    return ReportData(df, runs if runs is not None else pd.DataFrame(), envs, store_peaks(store), ids)


def store_peaks(store: Any) -> pd.DataFrame:
    """The store's measured-peaks table (empty when it has none)."""
    peaks = getattr(store, "peaks", None)
    if peaks is None:
        return pd.DataFrame()
    try:
        p = peaks() if callable(peaks) else peaks
    except Exception:  # noqa: BLE001 — a report without ceilings is still a report
        return pd.DataFrame()
    return p if isinstance(p, pd.DataFrame) else pd.DataFrame(p)


# -- tables -----------------------------------------------------------------------------------

def fmt_time(s: float | None) -> str:
    if s is None or not np.isfinite(s):
        return ""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def fmt_bytes(b: float | None) -> str:
    if b is None or not np.isfinite(b):
        return ""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.3g} {unit}"
        b /= 1024
    return ""


#: The summary table's columns (what the CLI prints and reports show).
SUMMARY_COLUMNS = ["kernel", "variant", "backend", "dtype", "size", "status", "median ± IQR", "GB/s", "GFLOP/s",
                   "% peak", "ceiling", "peak memory", "max error", "timer", "notes"]
#: Markers: a noisy cell (before its time) and a % of peak above 100 (after it, explained in the notes).
NOISY_MARK, PEAK_MARK = "~", "⚠"
def summary_table(df: pd.DataFrame, environments: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """The compact, human-formatted table (one line per cell) that the CLI prints and reports show.

    "% peak" is the share of the ceiling that bounds the kernel (GFLOP/s for compute-bound kernels, GB/s
    for memory-bound ones), "ceiling" names it and where it came from; a noisy cell's time starts with
    ``~`` and a % of peak above 100 ends with ``⚠``, both explained under "notes".
    """
    notes = row_notes(df, environments)
    rows = []
    for (_, r), (_, n) in zip(df.iterrows(), notes.iterrows(), strict=True):
        med, iqr = _f(r, "median_s"), _f(r, "iqr_s")
        time_text = (f"{fmt_time(med)} ± {fmt_time(iqr)}" if med is not None and iqr is not None
                     else fmt_time(med))
        pct = n["pct"] if n["pct"] is not None and not pd.isna(n["pct"]) else None
        rows.append({
            "kernel": r.get("kernel"), "variant": r.get("variant"), "backend": r.get("backend"),
            "dtype": r.get("dtype"), "size": r.get("size_label") or r.get("size"), "status": r.get("status"),
            "median ± IQR": f"{NOISY_MARK} {time_text}" if n["noisy"] and time_text else time_text,
            "GB/s": fmt_num(r.get("gbps")), "GFLOP/s": fmt_num(r.get("gflops")),
            "% peak": (fmt_num(pct) + (f" {PEAK_MARK}" if n["peak_note"] else "")) if pct is not None else "",
            "ceiling": n["ceiling"],
            "peak memory": fmt_bytes(_f(r, "peak_mem_bytes")), "max error": fmt_num(r.get("max_error"), 2),
            "timer": r.get("timer_kind") or "",
            "notes": "; ".join(x for x in (f"{NOISY_MARK} noisy: {n['noise_note']}" if n["noisy"] else "",
                                           f"{PEAK_MARK} {n['peak_note']}" if n["peak_note"] else "",
                                           n["exec_cache"]) if x),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def noise_summary(df: pd.DataFrame, notes: pd.DataFrame | None = None, listed: int = 5) -> str:
    """"3 of 40 cells were noisy: ..." (empty when no ok cell was)."""
    notes = row_notes(df) if notes is None else notes
    ok = df["status"] == "ok" if "status" in df else pd.Series(False, index=df.index)
    noisy = df[notes["noisy"].astype(bool) & ok]
    if noisy.empty:
        return ""
    names = [f"{r.get('kernel')}/{r.get('variant')} @ {r.get('backend')} {r.get('size_label') or ''}".strip()
             + (f" ({notes.loc[i, 'noise_note']})" if notes.loc[i, "noise_note"] else "")
             for i, r in noisy.head(listed).iterrows()]
    more = f", and {len(noisy) - listed} more" if len(noisy) > listed else ""
    return (f"{len(noisy)} of {int(ok.sum())} measured cells were noisy (marked {NOISY_MARK}; hollow markers in "
            f"the plots): " + "; ".join(names) + more)


def peak_summary(df: pd.DataFrame, notes: pd.DataFrame | None = None) -> list[str]:
    """Lines on the ceilings behind "% peak": where they came from, and how many rows went above 100%."""
    notes = row_notes(df) if notes is None else notes
    ok = (df["status"] == "ok") if "status" in df else pd.Series(False, index=df.index)
    n_ok = int(ok.sum())
    if not n_ok:
        return []
    sources = notes.loc[ok, "ceiling_source"].replace("", "no ceiling known").value_counts()
    lines = ["Ceilings behind % of peak: " + ", ".join(f"{k} for {v} of {n_ok} cells" for k, v in sources.items())]
    above = notes.loc[ok & (notes["peak_note"] != "")]
    if len(above):
        lines.append(f"{len(above)} cells are above 100% of a ceiling (marked {PEAK_MARK}); each note says why, "
                     "most often a working set that fits in the last-level cache.")
    return lines


def verdict_counts(verdicts: Iterable[Any]) -> dict[str, int]:
    """How many speed-ups got each verdict (faster / same / slower / ambiguous ...), in that order."""
    order = ["faster", "same", "slower", "ambiguous"]
    counts: dict[str, int] = {}
    for v in verdicts:
        v = _text(v)
        if v and v != "baseline":
            counts[v] = counts.get(v, 0) + 1
    return {k: counts[k] for k in sorted(counts, key=lambda k: (order.index(k) if k in order else 99, k))}


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    if "status" not in df or df.empty:
        return {}
    return {str(k): int(v) for k, v in df["status"].value_counts().items()}


def failures_table(df: pd.DataFrame) -> pd.DataFrame:
    cols = ["kernel", "variant", "backend", "dtype", "size", "status", "reason", "traceback"]
    bad = df[df["status"] != "ok"] if "status" in df else df.iloc[0:0]
    rows = [{"kernel": r.get("kernel"), "variant": r.get("variant"), "backend": r.get("backend"),
             "dtype": r.get("dtype"), "size": r.get("size_label") or r.get("size"), "status": r.get("status"),
             "reason": _text(r.get("message")), "traceback": _text(r.get("traceback"))}
            for _, r in bad.iterrows()]
    return pd.DataFrame(rows, columns=cols)


def speedup_table(df: pd.DataFrame, baseline: Any = None) -> pd.DataFrame:
    """Formatted speed-ups against the baseline (default: each kernel's library variant)."""
    from ..stats_compare import speedup_vs_baseline
    from .plots import parse_baseline

    variant, backend = parse_baseline(baseline)
    t = speedup_vs_baseline(df, baseline_variant=variant, baseline_backend=backend)
    t = t[t["verdict"] != "baseline"]
    out = pd.DataFrame({
        "kernel": t["kernel"], "variant": t["variant"], "backend": t["backend"], "dtype": t["dtype"],
        "size": t["size_label"],
        "baseline": t["baseline_variant"].fillna("") + " @ " + t["baseline_backend"].fillna(""),
        "speed-up": [fmt_num(x) for x in t["speedup"]],
        "95% CI": [f"{fmt_num(lo)} – {fmt_num(hi)}" if np.isfinite(lo) else ""
                   for lo, hi in zip(t["ci_low"], t["ci_high"], strict=True)],
    })
    if "floor" in t:  # the noise floor a difference must clear to be called faster or slower
        out["noise floor"] = [f"±{float(f):.0%}" if f is not None and np.isfinite(float(f)) else ""
                              for f in pd.to_numeric(t["floor"], errors="coerce")]
    out["verdict"] = t["verdict"]
    return out.reset_index(drop=True)


def reference_speedups(ok: pd.DataFrame, baseline: Any = None) -> pd.DataFrame:
    """:func:`speedup_table` with every kernel against the one reference of the report (see
    :func:`workbench.report.findings.pick_reference`), never a per-backend mix."""
    from .findings import parse_reference, pick_reference

    variant, backend = parse_reference(baseline)
    tables = []
    for kernel in dict.fromkeys(ok["kernel"]):
        k = ok[ok["kernel"] == kernel]
        ref = pick_reference(k, variant, backend)
        tables.append(speedup_table(k, {"variant": ref[0], "backend": ref[1]} if ref else baseline))
    return pd.concat(tables, ignore_index=True) if tables else speedup_table(ok, baseline)


def runs_table(data: ReportData) -> pd.DataFrame:
    df, runs = data.df, data.runs
    out = []
    for rid in data.run_ids or list(dict.fromkeys(df.get("run_id", []))):
        rows = df[df["run_id"] == rid] if "run_id" in df else df
        rec = runs[runs["run_id"] == rid].iloc[0].to_dict() if len(runs) and "run_id" in runs and \
            (runs["run_id"] == rid).any() else {}
        wall = rec.get("wall_s")
        if wall is None or (isinstance(wall, float) and math.isnan(wall)):
            wall = pd.to_numeric(rows.get("wall_s", pd.Series(dtype=float)), errors="coerce").sum()
        devices = ", ".join(str(d) for d in dict.fromkeys(rows.get("device", pd.Series(dtype=str)).dropna()))
        started = rec.get("created_at") or (rows["started_at"].dropna().min() if "started_at" in rows and len(rows)
                                            else "")
        out.append({"run": rid, "name": _text(rec.get("name") or rec.get("suite") or ""), "started": _text(started),
                    "host": _host(data, rec, rows), "devices": devices, "wall time": fmt_time(float(wall or 0)),
                    "cells": len(rows),
                    "status": ", ".join(f"{k}: {v}" for k, v in status_counts(rows).items())})
    return pd.DataFrame(out, columns=["run", "name", "started", "host", "devices", "wall time", "cells", "status"])


def _host(data: ReportData, run: dict[str, Any], rows: pd.DataFrame) -> str:
    env_ids = [run.get("env_id")] + (list(dict.fromkeys(rows["env_id"].dropna())) if "env_id" in rows else [])
    hosts = []
    for e in dict.fromkeys(x for x in env_ids if x):
        host = (data.environments.get(str(e)) or {}).get("host")
        if isinstance(host, dict):
            hosts.append(" ".join(str(host[k]) for k in ("hostname", "cpu_model") if host.get(k)))
    return ", ".join(h for h in hosts if h)


# -- figures ----------------------------------------------------------------------------------

def figure_data_uri(fig: Any, dpi: int = 160) -> str:
    """A PNG data URI at twice screen resolution (for places that need an image file, not markup)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def figure_svg(fig: Any, salt: str) -> str:
    """The figure as inline SVG markup: sharp at any zoom, text that stays text, and no base64 overhead.

    ``salt`` keeps the ids of this figure's clip paths and markers apart from every other figure's on the
    page (and the same from one run of the report to the next)."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return compact_svg(buf.getvalue())


_SVG_NUMBER = re.compile(r"(\d+\.\d\d)\d+")
_SVG_GID = re.compile(r' id="[A-Za-z.]+(?:_[A-Za-z]+)*_\d+"')
_SVG_FONTS = re.compile(r"font-family: [^;\"]+")


def compact_svg(text: str) -> str:
    """matplotlib's SVG without what a page does not need: the XML header and metadata, coordinates past
    1/100 pt, the figure-local ids (``axes_1``: they would repeat on every figure of the page),
    indentation, and the dozen fallback font names on every label (about 25% less)."""
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = _SVG_NUMBER.sub(r"\1", text)
    text = _SVG_GID.sub("", text)
    text = _SVG_FONTS.sub("font-family: 'DejaVu Sans', Verdana, sans-serif", text)
    text = re.sub(r"\s*\n\s*", " ", text)
    return re.sub(r">\s+<", "><", text)


#: Above this many FLOPs per byte a kernel counts as compute-bound, for rows that do not say (``bound``).
COMPUTE_BOUND_INTENSITY = 4.0


def _throughput_metric(k: pd.DataFrame) -> str:
    """GB/s for memory-bound kernels, GFLOP/s for compute-bound ones, as the rows say (``bound``);
    rows stored before that column existed are judged by their arithmetic intensity."""
    stated = k["bound"].dropna() if "bound" in k else pd.Series(dtype=object)
    if len(stated):
        return "gflops" if stated.iloc[0] == "compute-bound" else "gbps"
    inten = pd.to_numeric(k.get("intensity", pd.Series(dtype=float)), errors="coerce").median()
    return "gflops" if inten and inten > COMPUTE_BOUND_INTENSITY else "gbps"


def _intensity_varies(ok: pd.DataFrame) -> bool:
    v = pd.to_numeric(ok.get("intensity", pd.Series(dtype=float)), errors="coerce").dropna()
    return len(v) > 1 and v.max() / v.min() > 1.2 if len(v) and v.min() > 0 else False


def kernel_figures(data: ReportData, baseline: Any = None, styles: Any = None,
                   run_names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Per kernel: its compact table and only the figures that carry something.

    Always the time / % of ceiling figure; a roofline only where it has points and a roof and the
    kernel's arithmetic intensity changes with size (with one intensity the points stack on one
    vertical, and the % of ceiling panel already says how far below the roof they are); a memory
    figure only where the series' memories differ (:func:`workbench.report.plots.memories_differ`).
    """
    from . import plots
    from .findings import parse_reference, pick_reference
    from .tables import pivot

    out = []
    df = data.df
    styles = styles if styles is not None else plots.styles_for(df)
    variant, backend = parse_reference(baseline)
    for i, kernel in enumerate(dict.fromkeys(df["kernel"]) if "kernel" in df else []):
        k = df[df["kernel"] == kernel]
        ok = k[k["status"] == "ok"]
        figs = []
        ref = pick_reference(ok, variant, backend)
        if len(ok):
            figs.append({"caption": "time per call and share of the ceiling against size",
                         "svg": figure_svg(plots.plot_kernel(k, str(kernel), styles=styles, run_names=run_names),
                                           f"k{i}t")})
            if _intensity_varies(ok) and plots.has_roof(ok, data.peaks):
                fig = plots.plot_roofline(ok, data.peaks, environments=data.environments, styles=styles,
                                          run_names=run_names, title=f"{kernel}: roofline")
                figs.append({"caption": "roofline: arithmetic intensity grows with size", "svg": figure_svg(
                    fig, f"k{i}r")})
            if plots.memories_differ(ok):
                fig = plots.plot_memory(ok, styles=styles, run_names=run_names)
                figs.append({"caption": "peak memory of one call (each backend's own method)",
                             "svg": figure_svg(fig, f"k{i}m")})
        speedups = _records(speedup_table(ok, {"variant": ref[0], "backend": ref[1]} if ref else baseline)
                            ) if len(ok) else []
        out.append({"kernel": kernel, "anchor": f"kernel-{i + 1}", "figures": figs, "n_ok": len(ok),
                    "n_rows": len(k), "speedups": speedups, "pivot": pivot(k, ref, run_names),
                    "verdicts": verdict_counts(s["verdict"] for s in speedups)})
    return out


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _text(v) for k, v in r.items()} for r in df.to_dict("records")]


def environment_sections(envs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each environment record flattened to (section, key, value) text rows.

    Dicts give one row per key; lists of records (backends, thread pools) one
    row per item, named by its ``name`` and summarised as ``key=value`` pairs.
    """
    out = []
    for env_id, rec in envs.items():
        rows: list[tuple[str, str, str]] = []
        for section, value in (rec or {}).items():
            if isinstance(value, dict):
                rows += [(str(section), str(k), _scalar_text(v)) for k, v in value.items()]
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                for i, item in enumerate(value):
                    name = item.get("name") or item.get("user_api") or item.get("filepath") or str(i)
                    rows.append((str(section), str(name), _pairs(item)))
            else:
                rows.append((str(section), "", _scalar_text(value)))
        out.append({"env_id": env_id, "rows": rows})
    return out


def _scalar_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, default=str)


def _pairs(item: dict[str, Any], prefix: str = "") -> str:
    parts = []
    for k, v in item.items():
        if k == "name" and not prefix or v is None or v == "" or v == {} or v == []:
            continue
        if isinstance(v, dict):
            inner = _pairs(v, f"{prefix}{k}.")
            if inner:
                parts.append(inner)
        else:
            parts.append(f"{prefix}{k}={v if isinstance(v, str) else json.dumps(v, default=str)}")
    return "; ".join(parts)


# -- renderers ----------------------------------------------------------------------------------

def render_html(store_or_df: Any, run_ids: str | Iterable[str] | None = None, *, title: str | None = None,
                baseline: Any = None) -> str:
    """The report: key findings first (against one reference, ``baseline``: default numpy's library
    variant), a table of contents, then per kernel a compact table and the figures that say something."""
    import jinja2

    from ..version import __version__
    from . import plots
    from .env_summary import environment_line, machines_table, run_names
    from .findings import key_findings

    data = gather(store_or_df, run_ids)
    check_baseline(data.df, baseline)  # one that names no series is an error listing them, not "no baseline"
    env = jinja2.Environment(loader=jinja2.PackageLoader("workbench.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    tmpl = env.get_template("report.html.j2")
    df = data.df
    names = run_names(data.runs, data.run_ids, data.environments)
    styles = plots.styles_for(df)
    notes = row_notes(df, data.environments)
    results = _records(summary_table(df, data.environments))
    for rec, (_, n) in zip(results, notes.iterrows(), strict=True):
        rec.update(_noisy=bool(n["noisy"]), _noise_note=n["noise_note"], _peak_note=n["peak_note"])
    runs = _records(runs_table(data))
    for r in runs:
        r["name"] = names.get(r["run"], r["name"])
    findings = key_findings(df, baseline, runs=data.runs, environments=data.environments, run_names=names)
    multi = len(data.run_ids) > 1 or len(data.environments) > 1
    kernels = kernel_figures(data, baseline, styles, names)
    return tmpl.render(
        title=title or "Kernel Workbench report: " + (", ".join(names.get(r, r) for r in data.run_ids)
                                                      or "(no runs)"),
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        runs=runs,
        multi=multi,
        findings=findings,
        counts=status_counts(df),
        n_rows=len(df),
        results=results,
        columns=SUMMARY_COLUMNS,
        noise_line=noise_summary(df, notes),
        peak_lines=peak_summary(df, notes),
        failures=_records(failures_table(df)),
        kernels=kernels,
        n_figures=sum(len(k["figures"]) for k in kernels),
        env_lines=[{"env_id": e, "line": environment_line(rec)} for e, rec in data.environments.items()],
        environments=environment_sections(data.environments),
        machines=_records(machines_table(df, data.environments)),
        peaks=_records(data.peaks) if len(data.peaks) else [],
    )


def md_table(df: pd.DataFrame) -> str:
    """A GitHub-style pipe table; every header and cell escaped (:func:`workbench.report.tables.md_escape`)."""
    if df.empty:
        return "_none_\n"

    from .tables import md_escape

    def cell(v: Any) -> str:
        return md_escape(_text(v))

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"


def render_markdown(store_or_df: Any, run_ids: str | Iterable[str] | None = None, *, title: str | None = None,
                    baseline: Any = None) -> str:
    """The report as Markdown: key findings first, then per-kernel pivot tables, then the full rows."""
    from .env_summary import environment_line, machines_table, run_names
    from .findings import key_findings, parse_reference, pick_reference
    from .tables import md_escape, pivot, pivot_markdown

    data = gather(store_or_df, run_ids)
    check_baseline(data.df, baseline)  # one that names no series is an error listing them, not "no baseline"
    df = data.df
    names = run_names(data.runs, data.run_ids, data.environments)
    notes = row_notes(df, data.environments)
    extra = [line for line in [noise_summary(df, notes), *peak_summary(df, notes)] if line]
    kf = key_findings(df, baseline, runs=data.runs, environments=data.environments, run_names=names)
    multi = len(data.run_ids) > 1 or len(data.environments) > 1
    ftable = pd.DataFrame([{"kernel": f.kernel, **({"run": f.run} if multi else {}),
                            "size": f"{f.size_class}: {f.size}" if f.size_class else f.size,
                            "fastest": f.fastest, "time": f.time, "speed-up": f.speedup_text,
                            "95% interval": f.ci_text, "verdict": f.verdict, "% of ceiling": f.pct_text,
                            "caveats": "; ".join(c["detail"] for c in f.caveats)} for f in kf.findings])
    variant, backend = parse_reference(baseline)
    pivots = []
    for kernel in dict.fromkeys(df["kernel"]) if "kernel" in df else []:
        k = df[df["kernel"] == kernel]
        ref = pick_reference(k[k["status"] == "ok"], variant, backend)
        pivots += [f"\n### {md_escape(kernel)}\n", pivot_markdown(pivot(k, ref, names))]
    parts = [f"# {md_escape(title or 'Kernel Workbench report')}\n",
             *[f"{md_escape(environment_line(r))}\n" for r in data.environments.values()],
             "## Key findings\n", f"Speed-ups over one reference for the whole report: {md_escape(kf.reference)}.\n",
             *[f"- {md_escape(c)}" for c in kf.caveats], "", md_table(ftable),
             "## Summary\n", md_table(runs_table(data)),
             "\nCells by status: " + (", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in status_counts(df).items())
                                      or "none") + "\n",
             *[f"\n{md_escape(line)}\n" for line in extra],
             "\n## Per kernel\n", *pivots,
             "\n## Results\n", md_table(summary_table(df, data.environments)),
             "\n## Cells that did not pass\n", md_table(failures_table(df).drop(columns=["traceback"]))]
    ok = df[df["status"] == "ok"] if "status" in df else df
    if len(ok):
        sp = reference_speedups(ok, baseline)
        counts = verdict_counts(sp["verdict"])
        parts += ["\n## Speed-up vs the reference\n", md_table(sp)]
        if counts:
            parts.append("\nVerdicts: " + ", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in counts.items()) + "\n")
    if len(data.peaks):
        parts += ["\n## Measured peaks\n", md_table(data.peaks)]
    machines = machines_table(df, data.environments)
    if len(machines):  # rows from several machines, or from Dask workers: which machine measured what
        parts += ["\n## Machines\n", md_table(machines)]
    for env in environment_sections(data.environments):
        parts += [f"\n## Environment {md_escape(env['env_id'])}\n",
                  md_table(pd.DataFrame(env["rows"], columns=["section", "key", "value"]))]
    return "\n".join(parts)


def export_payload(data: ReportData) -> dict[str, Any]:
    """Rows without a store, in the store's export format (``Store.import_file`` reads it back)."""
    from ..store import EXPORT_FORMAT, EXPORT_VERSION, now_iso

    runs = _json_records(data.runs)
    known = {r.get("run_id") for r in runs}
    for rid in data.run_ids:  # bare rows: minimal run records so the import lists the runs
        if rid not in known:
            rows = data.df[data.df["run_id"] == rid] if "run_id" in data.df else data.df
            started = rows["started_at"].dropna().min() if "started_at" in rows and len(rows) else None
            env = rows["env_id"].dropna().iloc[0] if "env_id" in rows and rows["env_id"].notna().any() else None
            runs.append({"run_id": rid, "created_at": started, "env_id": env, "status": "finished",
                         "name": None, "suite": None, "argv": None, "spec": None, "wall_s": None})
    results = [{k: v for k, v in r.items()} for r in _json_records(data.df)]
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": now_iso(),
            "runs": runs, "environments": [{"env_id": k, "record": v} for k, v in data.environments.items()],
            "results": results, "peaks": _json_records(data.peaks)}


def _json_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    if df is None or len(df) == 0:
        return []
    return json.loads(df.to_json(orient="records", date_format="iso", double_precision=15))


def write_report(store_or_df: Any, run_ids: str | Iterable[str] | None, path: str | Path,
                 format: str | None = None, **kw: Any) -> Path:  # noqa: A002 — the natural name
    """Write ``run_ids`` (None: all; ``"latest"`` allowed) as html / md / json / csv, by extension by default."""
    path = Path(path)
    fmt = (format or FORMATS.get(path.suffix.lower(), "")).lower().lstrip(".")
    fmt = {"markdown": "md", "htm": "html"}.get(fmt, fmt)
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"cannot tell the report format of {str(path)!r}: supported formats are "
                         f"{', '.join(REPORT_FORMATS)}; use a .html, .md, .json or .csv file or pass format=")
    from ..output_guard import check_output_path, write_output
    from ..store import default_store_path

    # never over a results store (this one or any other), before any work; written atomically below
    guard = {"flag": "report", "stores": (getattr(store_or_df, "path", None), default_store_path()),
             "export": fmt == "json"}
    check_output_path(path, **guard)
    if fmt == "json" and not isinstance(store_or_df, (pd.DataFrame, ReportData)) and hasattr(store_or_df, "export"):
        ids = resolve_run_ids(store_or_df, run_ids) or known_run_ids(store_or_df)
        store_or_df.export(ids, path)
        return path
    if fmt == "html":
        text = render_html(store_or_df, run_ids, **kw)
    elif fmt == "md":
        text = render_markdown(store_or_df, run_ids, **kw)
    elif fmt == "json":
        text = json.dumps(export_payload(gather(store_or_df, run_ids)), indent=1, default=str)
    else:
        text = csv_text(gather(store_or_df, run_ids).df)
    write_output(path, text, **guard)
    return path


#: A cell starting with one of these is a formula to a spreadsheet (CSV injection); it gets a leading quote.
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v: Any) -> Any:
    """A text value a spreadsheet shows as text: a formula prefix is neutralised with a leading ``'``."""
    return "'" + v if isinstance(v, str) and v.startswith(CSV_FORMULA_PREFIXES) else v


def csv_text(df: pd.DataFrame) -> str:
    """Rows as CSV that is safe to open in a spreadsheet: text cells that start like a formula get a leading
    quote, and every cell holding a CR or LF is quoted (RFC 4180 line ends, so a bare CR never splits a row)."""
    out = df.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]):  # object or string columns
            out[col] = out[col].map(csv_cell)
    out.columns = [csv_cell(str(c)) for c in out.columns]
    return out.to_csv(index=False, lineterminator="\r\n")


def safe_file_stem(text: Any, limit: int = 100) -> str:
    """``text`` (a run id, a kernel name: data, maybe imported) as one file-name component: letters,
    digits, ``_ . -`` only, no leading dot or dash, at most ``limit`` characters; never a path."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("._-")[:limit]
    return stem or "run"


REPORT_FORMATS = ("html", "md", "json", "csv")


def report_format(path: str | Path | None, format: str | None = None, flag: str = "path") -> str:  # noqa: A002
    """The format to write ``path`` in: ``format`` when given, else the extension's, else html (no
    extension). An extension that is no report format (``r.pdf``) without ``format``, an unknown ``format``,
    or a format that a report extension contradicts (``r.csv`` as md), is a ValueError naming the formats."""
    suffixes = ", ".join(FORMATS)
    fmt = None
    if format is not None:
        fmt = {"markdown": "md", "htm": "html"}.get(str(format).lower().lstrip("."), str(format).lower().lstrip("."))
        if fmt not in REPORT_FORMATS:
            raise ValueError(f"unknown report format {format!r}; supported formats: {', '.join(REPORT_FORMATS)}")
    if path is not None and str(path).strip():
        suffix = Path(path).suffix.lower()
        by_suffix = FORMATS.get(suffix)
        if suffix and by_suffix is None and fmt is None:  # with a format given, any extension goes (r.txt)
            raise ValueError(f"{flag} {str(path)!r}: {suffix!r} is not a report format; supported formats: "
                             f"{', '.join(REPORT_FORMATS)} (a file ending in {suffixes})")
        if fmt and by_suffix and by_suffix != fmt:
            raise ValueError(f"{flag} {str(path)!r} ends in {suffix!r} but the format asked for is {fmt!r}; "
                             "make them agree")
        fmt = fmt or by_suffix
    elif path is not None:
        raise ValueError(f"{flag} needs a file name, got an empty one")
    return fmt or "html"


def check_baseline(df: pd.DataFrame, baseline: Any, flag: str = "baseline", given: Any = None) -> None:
    """A baseline (``VARIANT``, ``VARIANT @ BACKEND`` or ``@BACKEND``) that names no measured series is a
    ValueError listing the valid series (an unknown one would silently give "no baseline")."""
    from .plots import parse_baseline
    from .styles import series_key

    variant, backend = parse_baseline(baseline)
    if variant is None and backend is None:
        return
    baseline = baseline if given is None else given  # as the user wrote it, in messages
    rows = df[df["status"] == "ok"] if "status" in df and (df["status"] == "ok").any() else df
    if rows.empty or "variant" not in rows or "backend" not in rows:
        raise ValueError(f"{flag} {baseline!r}: there are no measured cells to compare against")
    match = pd.Series(True, index=rows.index)
    if variant is not None:
        match &= rows["variant"].astype(str) == variant
    if backend is not None:
        match &= rows["backend"].astype(str) == backend
    if not match.any():
        series = list(dict.fromkeys(series_key(v, b) for v, b in zip(rows["variant"], rows["backend"], strict=True)))
        shown = ", ".join(series[:40]) + (f", ... ({len(series)} in all)" if len(series) > 40 else "")
        raise ValueError(f"{flag} {baseline!r} names no measured series; valid: {shown} (give VARIANT, "
                         "VARIANT@BACKEND or @BACKEND)")

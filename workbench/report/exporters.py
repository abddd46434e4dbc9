"""Write runs out as one self-contained HTML page, Markdown, JSON (importable) or CSV.

Input is either a results store (which also knows runs, environments and
measured peaks) or a bare tidy DataFrame. The HTML page embeds its figures as
PNG data URIs and its CSS inline and links to nothing outside itself, so it can
be mailed, archived or opened offline and still show everything; every string
that came from a user (kernel, variant, run names, messages) is escaped by
jinja2's autoescaping.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.core.output_guard import check_output_path, write_output
from workbench.core.record import JsonObject
from workbench.report.data import ReportData, gather, known_run_ids, resolve_run_ids, row_frames, row_tuples
from workbench.report.model import build_report
from workbench.report.render import html_pieces, render_markdown
from workbench.store.database import EXPORT_FORMAT, EXPORT_VERSION, default_store_path, now_iso

FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json", ".csv": "csv"}

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



def export_payload(data: ReportData) -> JsonObject:
    """Rows without a store, in the store's export format (``Store.import_file`` reads it back)."""
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


def _json_records(df: pd.DataFrame) -> list[JsonObject]:
    """The frame's rows as JSON objects, as the export writes them (ISO dates, 15 significant digits)."""
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

    # never over a results store (this one or any other), before any work; written atomically below
    guard = {"flag": "report", "stores": (getattr(store_or_df, "path", None), default_store_path()),
             "export": fmt == "json"}
    check_output_path(path, **guard)
    if fmt == "json" and not isinstance(store_or_df, (pd.DataFrame, ReportData)) and hasattr(store_or_df, "export"):
        ids = resolve_run_ids(store_or_df, run_ids) or known_run_ids(store_or_df)
        store_or_df.export(ids, path)
        return path
    if fmt == "html":  # built whole first (a bad baseline writes nothing), then written as it is rendered
        text = html_pieces(build_report(store_or_df, run_ids, **kw))
    elif fmt == "md":
        text = render_markdown(store_or_df, run_ids, **kw)
    elif fmt == "json":
        text = json.dumps(export_payload(gather(store_or_df, run_ids)), indent=1, default=str)
    else:  # streamed: a store's rows are read and written a batch at a time
        text = csv_pieces(store_or_df, run_ids)
    write_output(path, text, **guard)
    return path


#: A cell starting with one of these is a formula to a spreadsheet (CSV injection); it gets a leading quote.
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v: Any) -> Any:
    """A text value a spreadsheet shows as text: a formula prefix is neutralised with a leading ``'``."""
    return "'" + v if isinstance(v, str) and v.startswith(CSV_FORMULA_PREFIXES) else v


def csv_pieces(store_or_df: Any, run_ids: str | Iterable[str] | None) -> Iterator[str]:
    """:func:`csv_text` of the rows, in pieces: a store's rows come as CSV fields already
    (:func:`workbench.report.data.row_tuples` with ``csv_fields``: quoted as the csv module quotes, formulas
    neutralised), joined a batch at a time (the same text, without a frame or the csv module's pass over
    every character); other rows, frame by frame."""
    rows = row_tuples(store_or_df, run_ids, CSV_FORMULA_PREFIXES, csv_fields=True, joined=True)
    if rows is None:
        for i, df in enumerate(row_frames(store_or_df, run_ids)):
            yield csv_text(df, header=i == 0)
        return
    columns, batches = rows
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([csv_cell(str(c)) for c in columns])
    yield buf.getvalue()
    yield from batches  # each its rows' CSV lines already


def csv_text(df: pd.DataFrame, header: bool = True) -> str:
    """Rows as CSV that is safe to open in a spreadsheet: text cells that start like a formula get a leading
    quote, and every cell holding a CR or LF is quoted (RFC 4180 line ends, so a bare CR never splits a row)."""
    out = df.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]):  # object or string columns
            out[col] = out[col].map(csv_cell)
    out.columns = [csv_cell(str(c)) for c in out.columns]
    return out.to_csv(index=False, header=header, lineterminator="\r\n")


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



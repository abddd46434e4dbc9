"""``workbench report``: write stored runs as HTML, Markdown, JSON (importable elsewhere) or CSV."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

FORMATS = ("html", "md", "json", "csv")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("report", help="write runs as an HTML/Markdown/JSON/CSV report",
                              description="Write one or more stored runs as a report. HTML is one "
                                          "self-contained file (figures embedded); JSON is the store's export "
                                          "format, which `workbench import` reads on another machine.")
    p.add_argument("runs", nargs="*", default=["latest"], metavar="RUN",
                   help="run ids, or 'latest' (default: latest)")
    p.add_argument("--store", default=None, metavar="PATH", help="results store (default: the default store)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="report format (default: from --out's extension, else html)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="file to write (default: reports/<run>.<format>)")
    p.add_argument("--baseline", default=None, metavar="VARIANT[@BACKEND]",
                   help="one reference for the whole report's speed-ups (default: numpy's library variant); "
                        "VARIANT@BACKEND or @BACKEND")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report.exporters import FORMATS as BY_SUFFIX
    from ..report.exporters import resolve_run_ids, write_report
    from ..store import open_store

    store = open_store(args.store, must_exist=True)
    ids = resolve_run_ids(store, args.runs)
    fmt = args.format or (BY_SUFFIX.get(Path(args.out).suffix.lower()) if args.out else None) or "html"
    out = Path(args.out) if args.out else Path("reports") / f"{ids[0] if len(ids) == 1 else 'runs'}.{fmt}"
    kw = {"baseline": _baseline(args.baseline)} if args.baseline and fmt in ("html", "md") else {}
    path = write_report(store, ids, out, format=fmt, **kw)
    print(f"wrote {path} ({fmt}, runs: {', '.join(ids)})")
    return 0


def _baseline(text: str | None) -> str | None:
    """"variant@backend" or "variant @ backend" -> the form plots.parse_baseline reads."""
    if not text:
        return None
    variant, _, backend = text.replace(" @ ", "@").partition("@")
    return f"{variant.strip()} @ {backend.strip()}" if backend else variant.strip()

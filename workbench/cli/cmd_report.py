"""``workbench report``: write stored runs as HTML, Markdown, JSON (importable elsewhere) or CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workbench.cli.args_common import given_text
from workbench.core.output_guard import check_output_path, writes_to_stdout
from workbench.core.terminal_text import terminal_safe
from workbench.store.database import open_store

FORMATS = ("html", "md", "json", "csv")
#: What ``--baseline`` is checked against (report.data.check_baseline): the measured series.
BASELINE_COLUMNS = ("status", "variant", "backend")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("report", help="write runs as an HTML/Markdown/JSON/CSV report",
                              description="Write one or more stored runs as a report. HTML is one "
                                          "self-contained file (figures embedded); JSON is the store's export "
                                          "format, which `workbench import` reads on another machine.")
    p.add_argument("runs", nargs="*", default=["latest"], metavar="RUN",
                   help="runs by id, name (bench --name) or unique prefix, or 'latest' (default: latest)")
    p.add_argument("--store", default=None, metavar="PATH", help="results store (default: the default store)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="report format (default: from --out's extension, else html)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="file to write, ending in .html, .md, .json or .csv (default: reports/<run>.<format>, "
                        "the run id made safe as a file name)")
    p.add_argument("--baseline", default=None, metavar="VARIANT[@BACKEND]", type=given_text,
                   help="one reference for the whole report's speed-ups (default: numpy's library variant); "
                        "VARIANT@BACKEND or @BACKEND")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.report.data import check_baseline, resolve_run_ids
    from workbench.report.exporters import report_format, safe_file_stem, write_report

    fmt = report_format(args.out, args.format, flag="--out")  # before the store is even opened
    if args.out:  # as given (`out/` names a folder; as a Path it was `out`, and a file of that name was written)
        check_output_path(args.out, flag="--out", export=fmt == "json")
    store = open_store(args.store, must_exist=True)
    ids = resolve_run_ids(store, args.runs)
    # a run id comes from data (an import): it names the default file only as a sanitised stem, never a path
    stem = safe_file_stem(ids[0]) if len(ids) == 1 else "runs"
    out = Path(args.out) if args.out else Path("reports") / f"{stem}.{fmt}"
    kw = {}
    if args.baseline:
        # the three columns the check reads, not every column of every row (a million rows: gigabytes)
        check_baseline(store.results(run_ids=ids, columns=BASELINE_COLUMNS), _baseline(args.baseline),
                       flag="--baseline", given=args.baseline)
        if fmt in ("html", "md"):
            kw["baseline"] = _baseline(args.baseline)
    path = write_report(store, ids, out, format=fmt, **kw)
    # a report streamed to stdout (--out /dev/stdout) is the output: the note goes to stderr
    print(f"wrote {terminal_safe(path, one_line=True)} ({fmt}, runs: {', '.join(ids)})",
          file=sys.stderr if writes_to_stdout(out) else sys.stdout)
    return 0


def _baseline(text: str | None) -> str | None:
    """"variant@backend" or "variant @ backend" -> the form plots.parse_baseline reads."""
    if not text:
        return None
    variant, _, backend = text.replace(" @ ", "@").partition("@")
    return f"{variant.strip()} @ {backend.strip()}" if backend else variant.strip()

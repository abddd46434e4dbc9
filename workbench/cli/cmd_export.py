"""``workbench export``: write runs as one JSON document that `workbench import` merges elsewhere."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.core.output_guard import check_output_path, writes_to_stdout
from workbench.core.terminal_text import terminal_safe
from workbench.store.database import default_store_path, open_store

#: Extensions an export may have: it is always the store's JSON format (`report` writes CSV, HTML, Markdown).
EXPORT_SUFFIXES = (".json", "")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export runs (with environments and peaks) as JSON for another store")
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID",
                   help="runs to export by id or name (default: all; 'latest' or a unique prefix allowed)")
    p.add_argument("-o", "--out", required=True, metavar="FILE",
                   help="output JSON file (.json); never a results store. For CSV, HTML or Markdown use "
                        "`workbench report --out FILE.csv`")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.set_defaults(func=run)


def check_export_path(out: str) -> None:
    """An export is JSON: a file named for another format (``e.csv``) is refused, naming the choices."""
    if not out.strip():
        raise ValueError("export -o needs a file name, got an empty one")
    suffix = Path(out).suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise ValueError(f"export -o {out!r}: an export is JSON, not {suffix!r}; give a file ending in .json "
                         "(for csv, html or md use `workbench report --out FILE.csv`)")


def run(args: argparse.Namespace) -> int:
    if args.out.strip():  # a store named as the output is the worse mistake: said first
        check_output_path(args.out, flag="export -o", stores=(args.store, default_store_path()), export=True)
    check_export_path(args.out)
    store = open_store(args.store, must_exist=True)  # read-only: exporting never creates or changes a store
    from workbench.report.data import resolve_run_ids

    ids = resolve_run_ids(store, args.run_ids)  # ids, 'latest', names or unique prefixes
    path = store.export(ids, args.out)
    print(f"wrote {terminal_safe(path, one_line=True)}", file=sys.stderr if writes_to_stdout(args.out) else sys.stdout)
    return 0

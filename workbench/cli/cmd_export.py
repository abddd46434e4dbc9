"""``workbench export``: write runs as one JSON document that `workbench import` merges elsewhere."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export runs (with environments and peaks) as JSON for another store")
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="runs to export (default: all; 'latest' allowed)")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="output JSON file")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..store import open_store

    store = open_store(args.store, must_exist=True)  # read-only: exporting never creates or changes a store
    ids = [store.latest_run_id() if r == "latest" else r for r in args.run_ids] or None
    if ids is not None and None in ids:
        raise ValueError(f"no runs in {store.path}, so there is no 'latest' run")
    path = store.export(ids, args.out)
    print(f"wrote {path}")
    return 0

"""``workbench runs``: list the runs in a results store."""

from __future__ import annotations

import argparse

from workbench.store.database import open_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list the runs in a results store")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args.store, must_exist=True)  # read-only: listing never creates or changes a store
    runs = store.runs()
    if runs.empty:
        print(f"no runs in {store.path}")
        return 0
    cols = ["run_id", "created_at", "status", "suite", "name", "n_results", "n_ok", "wall_s", "env_id"]
    table = runs[cols].copy()
    # a run marked running that no live process writes was killed, or stopped by a full disk before it
    # could say so: show what it is
    table["status"] = [("interrupted (its process is gone)" if s == "running" and store.live_owner(r) is None
                        else s) for r, s in zip(table["run_id"], table["status"], strict=True)]
    table["wall_s"] = table["wall_s"].map(lambda v: f"{v:.1f}" if v == v and v is not None else "-")
    table["n_ok"] = table["n_ok"].fillna(0).astype(int)
    print(table.fillna("-").to_string(index=False))
    return 0

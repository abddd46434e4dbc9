"""Maintenance of a results store. `check` runs SQLite's integrity check and looks for rows of unknown runs,
runs marked running that no process writes, unreadable JSON and a write-ahead log not yet in the main file,
and says what to do about each (exit 1 when it finds something). `drop RUN` removes one run and its rows."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from workbench.cli.args_common import add_store, command
from workbench.core.record import Json
from workbench.store.database import StoreError, open_store


def register(sub: Any) -> None:
    p = command(sub, "store", run, help="check a results store, or drop a run from it", description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="say what is wrong with the store (exit 1 if anything)")
    add_store(check)
    drop = actions.add_parser("drop", help="remove a run and its rows")
    drop.add_argument("run_id", metavar="RUN",
                      help="the run to remove: its id, name or a unique prefix (see `workbench runs`)")
    add_store(drop)


def run(args: argparse.Namespace) -> int:
    import sqlite3


    if args.action == "check":
        # a damaged store must still be examined: no health check on opening, and read-only if need be
        try:
            store = open_store(args.store, must_exist=True, read_only=False, verify=False)
        except (StoreError, sqlite3.DatabaseError):
            store = open_store(args.store, must_exist=True, read_only=True)
        problems = store.check(planned=planned_cells)
        try:
            runs = store.runs()
            print(f"{store.path}: {len(runs)} runs, "
                  f"{int(runs['n_results'].fillna(0).sum()) if len(runs) else 0} rows")
        except sqlite3.DatabaseError as exc:
            print(f"{store.path}: the runs cannot be listed ({exc})")
        for p in problems:
            print(f"  problem: {p}")
        print("no problems found" if not problems else f"{len(problems)} problem(s) found")
        return 1 if problems else 0
    store = open_store(args.store, must_exist=True, read_only=False)
    from workbench.store.run_names import resolve_run

    run_id = resolve_run(store, args.run_id, latest=store.latest_run_id())  # an id, a name or a unique prefix
    removed = store.drop_run(run_id)
    print(f"dropped run {run_id} and its {removed['results']} rows from {store.path}")
    return 0


def planned_cells(run: Mapping[str, Json]) -> tuple[int, int]:
    """(cells, rounds) of a run's stored sweep, rebuilt with this workbench's catalog (for `store check`)."""
    import json

    from workbench.sweep.driver import SweepSpec

    spec = SweepSpec.from_dict(json.loads(run["spec"]) if isinstance(run["spec"], str) else run["spec"])
    return len(spec.cells()), int(spec.rounds or 1)

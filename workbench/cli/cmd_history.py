"""``workbench history``: every series of a store on its machine, its level now and where it changed; with
``--fail-on-regression PCT``, a CI gate that exits 1 naming each series whose last change is a slowdown."""

from __future__ import annotations

import argparse
import json
import math
import sys

from workbench.cli.args_common import given_text
from workbench.core.units import fmt_time_auto
from workbench.history.changes import DEFAULT_THRESHOLD
from workbench.history.series import SeriesFilter, machine_matches, machines
from workbench.history.timeline import History, build_history
from workbench.store.database import open_store

#: Exit status when a regression at or above --fail-on-regression is in effect.
EXIT_REGRESSION = 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="each cell's series across runs on its machine, with change points",
                       description="Series: one cell (kernel, variant, backend, dtype, size, mode, cache, timing "
                                   "mode) on one machine fingerprint, across the store's runs. A change is a "
                                   "step of the series' level larger than its own noise and than --threshold.")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.add_argument("--since", metavar="DATE|RUN_ID", type=given_text,
                   help="only runs created at or after this date (2026-12-01, 2026-12-01T09:30, UTC) or run")
    p.add_argument("--machine", metavar="TEXT", type=given_text,
                   help="only machines whose fingerprint, description or env_id contains TEXT")
    p.add_argument("--kernel", action="append", metavar="NAME", type=given_text,
                   help="only this kernel (repeat, or a comma-separated list)")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD * 100, metavar="PCT",
                   help="smallest step reported, in percent (default 5)")
    p.add_argument("--all", action="store_true", help="list every series, not only those with a change")
    p.add_argument("--json", nargs="?", const="-", metavar="OUT",
                   help="write the history as JSON (to stdout, or to OUT)")
    p.add_argument("--fail-on-regression", type=float, metavar="PCT",
                   help="exit 1 when a series' last change is a slowdown of PCT percent or more (CI); a "
                        "step with the same clean commits and versions on both sides is the machine's and is "
                        "named but not gated; combine with --since to judge recent runs only")
    p.set_defaults(func=run)


def _checked_pct(value: float | None, flag: str) -> float | None:
    if value is not None and not (math.isfinite(value) and 0 <= value < 1000):
        raise ValueError(f"{flag} {value!r} is not a percentage between 0 and 1000")
    return value


def run(args: argparse.Namespace) -> int:
    threshold = _checked_pct(args.threshold, "--threshold")
    gate = _checked_pct(args.fail_on_regression, "--fail-on-regression")
    kernels = tuple(k.strip() for item in args.kernel or [] for k in item.split(",") if k.strip())
    store = open_store(args.store, must_exist=True)  # read-only: a history never changes a store
    which = SeriesFilter(since=args.since, machine=args.machine, kernels=kernels)
    history = build_history(store.connection, which, threshold=threshold / 100)
    if kernels and not history.series:
        known = sorted({r[0] for r in store.connection.execute("SELECT DISTINCT kernel FROM results")})
        missing = [k for k in kernels if k not in known]
        if missing:
            raise ValueError(f"--kernel {', '.join(missing)}: no such kernel in {store.path}; kernels there: "
                             f"{', '.join(known) or '(none)'}")
    if args.machine and not history.series:
        known = machines(store.connection)
        if not any(machine_matches(args.machine, m, env) for env, m in known.items()):
            listed = "; ".join(sorted({f"{m.id} ({m.label})" for m in known.values()})) or "(none)"
            raise ValueError(f"--machine {args.machine!r}: no machine of {store.path} matches; machines there: "
                             f"{listed}")
    if gate is not None and not history.series:  # a CI gate that passes on nothing would pass on anything
        raise ValueError(f"--fail-on-regression: no series to judge in {store.path} for the runs selected "
                         "(no ok rows there); widen --since, --machine or --kernel, or check the store")
    if args.json:
        text = json.dumps(history.to_json(), indent=1, allow_nan=False, default=str)
        if args.json == "-":
            print(text)
        else:
            from workbench.core.output_guard import write_output

            write_output(args.json, [text], flag="--json", stores=(store.path,))
    else:
        print(format_history(history, show_all=args.all))
    if gate is None:
        return 0
    found = history.regressions(gate)
    for h, c in found:
        print(f"regression: {h.series.label} on {h.series.machine.label} [{h.series.machine.id}]: {c.text}",
              file=sys.stderr)
    for h in history.series:
        for c in h.changes:
            if c.same_code and c.regression and c.step * 100 >= gate:
                print(f"not gated: {h.series.label} [{h.series.machine.id}]: {c.text}", file=sys.stderr)
    return EXIT_REGRESSION if found else 0


def format_history(history: History, show_all: bool = False) -> str:
    """The table: per series its runs, noise, level now and changes (those with changes first)."""
    if not history.series:
        return "no series: the store has no ok rows in the runs selected"
    lines = []
    shown = [h for h in history.series if h.changes or show_all]
    for machine_id, label in history.machines.items():
        mine = [h for h in shown if h.series.machine.id == machine_id]
        total = sum(1 for h in history.series if h.series.machine.id == machine_id)
        changed = sum(1 for h in history.series if h.series.machine.id == machine_id and h.changes)
        lines.append(f"machine {machine_id}: {label} — {total} series, {changed} with a change "
                     f"of {history.threshold:.0%} or more")
        for h in mine:
            lines.append(f"  {h.series.label} [{h.series.timer_kind}]: {len(h.series.points)} runs, noise "
                         f"±{h.sigma:.1%}, now {fmt_time_auto(h.level_s)}")
            lines.extend(f"    {'slower' if c.regression else 'faster'} {c.text}" for c in h.changes)
    if not show_all and not any(h.changes for h in history.series):
        lines.append("no changes (--all lists every series)")
    return "\n".join(lines)

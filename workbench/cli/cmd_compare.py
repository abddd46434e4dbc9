"""Speed-up of RUN_B over RUN_A for every cell both ran (same kernel, variant, backend, dtype, size, mode, cache),
its interval (labelled with its coverage) and a verdict: faster, slower, same (the whole interval within ±5%),
inconclusive (±the smallest effect the comparison could have seen; a note says what would settle it) or
insufficient samples, judged on the rounds' medians against the noise across rounds and runs
(docs/statistics.md). With one RUN and --baseline, compares each variant of that run against the baseline
instead, round by round."""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
from typing import Any

import pandas as pd

from workbench.cli.args_common import add_store, command, given_text
from workbench.core.record import JsonObject
from workbench.judge.between_runs import PROBE_K
from workbench.judge.few_rounds_basis import too_few_words
from workbench.judge.verdict_labels import reads_disturbed, verdict_label, verdict_labels
from workbench.judge.verdicts import DISTURBED_FLOOR, K_BETWEEN, is_disturbed, pct, rerun_hint
from workbench.store.database import open_store

#: The gate's default threshold: a sure "slower" must also be more than this much slower to fail it.
DEFAULT_THRESHOLD = "5%"


def register(subparsers: Any) -> None:
    p = command(subparsers, "compare", run, description=__doc__,
                help="speed-ups between two runs (or against a baseline) with verdicts")
    p.add_argument("run_a", metavar="RUN_A",
                   help="the reference run: its id, its name (bench --name), a unique prefix of either, or "
                        "'latest'; several runs of the same code as A1,A2,A3 (each side judged on the mean of its "
                        "runs: run-to-run noise shrinks with runs, not rounds)")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", default=None,
                   help="the run compared with it (id, name or unique prefix), or several: B1,B2,B3")
    add_store(p)
    p.add_argument("--baseline", default=None, metavar="VARIANT[@BACKEND]", type=given_text,
                   help="compare variants against this one within each run (default with one run: the "
                        "kernel's library variant)")
    p.add_argument("--json", action="store_true", help="print the table as JSON records")
    p.add_argument("--fail-on", choices=["slower"], default=None,
                   help="CI gate: exit 1 when a cell is surely slower (verdict 'slower') by more than "
                        "--threshold; the failing cells are printed")
    p.add_argument("--threshold", default=DEFAULT_THRESHOLD, metavar="T",
                   help="with --fail-on: the slow-down a cell may show before it fails the gate, as '5%%' or "
                        f"'0.05' (default {DEFAULT_THRESHOLD.replace('%', '%%')}); differences within the noise "
                        "floor never fail")


COLUMNS = ["kernel", "variant", "backend", "dtype", "size", "speedup", "ci_low", "ci_high", "floor", "verdict"]


def parse_threshold(text: str) -> float:
    """'5%' or '0.05' -> 0.05; anything else (negative, not a number, 100% or more) is a ValueError."""
    s = str(text).strip()
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)", s)
    value = float(m.group(1)) / (100 if m.group(2) else 1) if m else math.nan
    if not (0 <= value < 1):
        raise ValueError(f"--threshold {text!r} is not a valid threshold; give a slow-down as a percentage "
                         "('5%') or a fraction ('0.05'), at least 0 and below 100%")
    return value


def run_group(store: Any, text: str, flag: str) -> list[str]:
    """The run ids ``text`` names: one run (id, name, unique prefix or 'latest'), or several joined by commas
    (a name that itself holds a comma is taken whole when it names a run)."""
    from workbench.report.data import resolve_run_ids

    try:
        return resolve_run_ids(store, [text]) or []
    except ValueError:
        parts = [t.strip() for t in text.split(",")]
        if len(parts) < 2:
            raise
    if not all(parts):
        raise ValueError(f"{flag} {text!r} holds an empty run name; give runs joined by commas, as A1,A2,A3")
    ids = resolve_run_ids(store, parts) or []
    if len(ids) < len(parts):
        raise ValueError(f"{flag} {text!r} names a run twice; give each run once")
    return ids


def gate_failures(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Cells that fail ``--fail-on slower``: verdict "slower" and speed-up below 1 / (1 + threshold)."""
    if table.empty:
        return table
    speedup = pd.to_numeric(table["speedup"], errors="coerce")
    return table[(table["verdict"] == "slower") & (speedup < 1 / (1 + threshold))]


def between_runs(df: pd.DataFrame, side_a: list[str], side_b: list[str]) -> tuple[pd.DataFrame, str, list[str]]:
    """The table of two runs (or of several runs a side), its title and the notes that go under it."""
    from workbench.judge.compare import compare_runs
    from workbench.judge.replicates import compare_run_groups
    from workbench.report.ratio_text import sigma_pct  # a log sigma as e^σ - 1, as every sentence says it

    ids = side_a + side_b
    notes = []
    if len(side_a) > 1 or len(side_b) > 1:
        table = compare_run_groups(df, side_a, side_b)
        title = f"speed-up of {', '.join(side_b)} over {', '.join(side_a)} (> 1: the second side is faster)"
        notes.append(f"run-to-run noise beyond the cells' own rounds, between the runs of each side: "
                     f"{sigma_pct(table.attrs['run_noise'])} (one sigma); each side is the mean of its runs' medians")
    else:
        table = compare_runs(df, ids[0], ids[1])
        title = f"speed-up of {ids[1]} over {ids[0]} (> 1: {ids[1]} is faster)"
        used, left = table.attrs.get("noise_cells", (0, 0))
        notes.append(f"run-to-run noise beyond the cells' own rounds: {sigma_pct(table.attrs['run_noise'])} (one sigma)"
                     + (f", measured on the {used} cells whose rows record the same thread pools and device in both "
                        f"runs ({left} that differ left out: their change is what is compared)" if left else ""))
    if anchored := table.attrs.get("anchored"):
        anchors = sorted(set(table["anchor"].dropna()))
        notes.append(f"{anchored} cell(s) judged against their baseline ({', '.join(anchors[:4])}"
                     f"{' ...' if len(anchors) > 4 else ''}: the same library call, timed beside them in every "
                     "round of every run, so the host's drift common to both cancels; column 'anchor' in --json)")
    if table.attrs.get("probes_unused"):
        notes.append(f"note: {table.attrs['probes_unused']}")
    notes += [f"note: {c}" for c in table.attrs.get("conditions", [])]
    if table.attrs.get("timing_modes"):
        notes.append(f"note: {table.attrs['timing_modes']}")
    if table.attrs.get("unjudged") and not table.empty:
        notes.append(f"note: {table.attrs['unjudged']}")
    if (drift := table.attrs.get("speed_drift")) is not None and table.attrs.get("speed_scatter") is not None:
        notes.append(f"the machine's speed probe read {100 * (drift - 1):+.1f}% in {ids[1]} against {ids[0]}, within "
                     f"{PROBE_K:g}x its own round-to-round scatter (±{100 * table.attrs['speed_scatter']:.1f}%): "
                     "cells are judged as measured")
    elif drift is not None:
        notes.append(f"the machine's speed probe read {100 * abs(drift - 1):.1f}% "
                     f"{'slower' if drift > 1 else 'faster'} in {ids[1]} than in {ids[0]}: cells measured on "
                     "one machine in both runs are judged at one speed (each round's median over its probe)")
    if (drift := table.attrs.get("host_drift")) is not None:
        how = (f"within {PROBE_K:g}x its own scatter (±{100 * table.attrs['host_scatter']:.1f}%): CPU cells are "
               "judged as measured" if table.attrs.get("host_scatter") is not None else
               f"CPU cells of {ids[1]} are judged at {ids[0]}'s host speed (divided by that drift)")
        notes.append(f"the host probe each CPU cell's worker timed around its rounds read "
                     f"{100 * abs(drift - 1):.1f}% {'slower' if drift > 1 else 'faster'} in {ids[1]} than in "
                     f"{ids[0]} at the median round: {how}")
    if (drift := table.attrs.get("bandwidth_drift")) is not None:
        notes.append(f"the host's memory bandwidth probe read {100 * abs(1 / drift - 1):.1f}% "
                     f"{'lower' if drift > 1 else 'higher'} in {ids[1]} than in {ids[0]}: memory-bound cells "
                     "past the last-level cache are judged at one bandwidth")
    return table, title, notes


def environment_notes(store: Any, df: pd.DataFrame, side_a: list[str], side_b: list[str]) -> list[str]:
    """What differs between the two sides' environments, by name: the machine (its hardware) or the versions
    of what ran (``numba 0.68.1 -> 0.69.0``), so "different environments" says which."""
    from workbench.history.series import machine_of

    def machines(runs: list[str]) -> dict[str, Any]:
        envs = df.loc[df["run_id"].isin(runs), "env_id"].dropna().unique() if "env_id" in df else []
        out = {}
        for env in envs:
            try:
                out[str(env)] = machine_of(str(env), store.environment(str(env)))
            except (KeyError, ValueError, TypeError):
                continue
        return out

    a, b = machines(side_a), machines(side_b)
    if not a or not b or set(a) == set(b):
        return []
    if {m.id for m in a.values()} != {m.id for m in b.values()}:
        return [f"note: the machines differ: {'; '.join(sorted({m.label for m in a.values()}))} against "
                f"{'; '.join(sorted({m.label for m in b.values()}))}"]
    va = {k: v for m in a.values() for k, v in m.versions.items()}
    vb = {k: v for m in b.values() for k, v in m.versions.items()}
    changed = [f"{k} {va.get(k, '-')} -> {vb.get(k, '-')}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
    if not changed:
        return []
    shown = "; ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
    return [f"note: one machine, other versions: {shown} (a verdict compares the versions too)"]


def run(args: argparse.Namespace) -> int:
    from workbench.cli.cmd_report import _baseline
    from workbench.judge.compare import aa_summary, speedups_by_kernel
    from workbench.report.data import check_baseline
    from workbench.report.styles import parse_baseline

    threshold = parse_threshold(args.threshold)  # checked even without --fail-on: a bad value is never ignored
    threshold = threshold if args.fail_on else None
    store = open_store(args.store, must_exist=True)
    side_a = run_group(store, args.run_a, "RUN_A")
    side_b = run_group(store, args.run_b, "RUN_B") if args.run_b else []
    if len(side_a) > 1 and not side_b:
        raise ValueError(f"RUN_A names {len(side_a)} runs; several runs a side need a RUN_B to compare with")
    ids = list(dict.fromkeys(side_a + side_b))
    df = store.results(run_ids=ids)
    notes = []
    if args.run_b and not args.baseline:
        if len(ids) < 2:
            raise ValueError("RUN_A and RUN_B are the same run; give two different runs")
        table, title, notes = between_runs(df, side_a, side_b)
        notes += environment_notes(store, df, side_a, side_b)
    else:
        if args.baseline:
            check_baseline(df, _baseline(args.baseline), flag="--baseline", given=args.baseline)
        variant, backend = parse_baseline(_baseline(args.baseline))
        table = speedups_by_kernel(df, baseline_variant=variant, baseline_backend=backend)  # as the report does
        table = table[table["verdict"] != "baseline"]
        title = "speed-up over " + (args.baseline or "each kernel's library variant") + " (> 1: faster)"
        if twins := aa_summary(df):  # the run's own A/A twins: the floor measured on identical code
            notes.append(twins)
    if "size_label" in table:  # the readable size ("m=64 n=64 k=64") instead of the product
        table = table.drop(columns=["size"], errors="ignore").rename(columns={"size_label": "size"})
        # a row stored without params (an import, an old store) is a cell with no size: "-", never "None"
        table["size"] = table["size"].map(lambda v: v if isinstance(v, str) and v.strip() else "-")
    if threshold is not None and table.empty:  # "gate passed" on no cell at all: a CI gate passed on nothing
        raise ValueError(f"--fail-on: {table.attrs['unjudged']}" if table.attrs.get("unjudged") else
                         "--fail-on: no cell of the two sides matches (same kernel, variant, backend, dtype and "
                         "size), so there is nothing to judge; compare runs that measured the same cells")
    failed = gate_failures(table, threshold) if threshold is not None else None
    if args.json:
        print(json.dumps(_json_records(table), indent=1))
    else:
        print(title)
        print(format_table(table))
        counts = pd.Series(verdict_labels(table, past_floor_only=True)).value_counts()  # as the table prints them
        notes.insert(0, f"{len(table)} cells: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
        notes += settle_notes(table) + disturbed_notes(table, df)
        if args.run_b and not args.baseline:
            notes += more_runs_notes(table, store, side_a, side_b)
        if _noisy(table).any():
            notes.append("~: a cell flagged noisy in either row (see the rows' noise_note); its verdict already "
                         "allows for the noise measured")
        print("\n".join(notes))
    if failed is None:
        return 0
    return _gate(failed, threshold)


def _gate(failed: pd.DataFrame, threshold: float) -> int:
    import sys

    limit = f"{100 * threshold:g}%"
    if failed.empty:
        print(f"gate passed: no cell is surely slower by more than {limit}", file=sys.stderr)
        return 0
    print(f"gate FAILED: {len(failed)} cell(s) surely slower by more than {limit}:", file=sys.stderr)
    for _, r in failed.iterrows():
        how = (f"at most {r['ci_high']:.3g}x ({verdict_label(r['verdict'], r['floor'], r.get('basis'))})"
               if is_disturbed(r["floor"]) else
               f"{r['speedup']:.3g}x ({coverage_text(r.get('coverage'))} interval {r['ci_low']:.3g}-"
               f"{r['ci_high']:.3g}x, could see ±{pct(r['floor'])})")
        print(f"  {r['kernel']} {r['variant']} @ {r['backend']} {r['dtype']} {r['size']}: {how}", file=sys.stderr)
    return 1


def coverage_text(coverage: Any) -> str:
    """'99%' for an interval's coverage ('' when unknown)."""
    try:
        c = float(coverage)
    except (TypeError, ValueError):
        return ""
    return f"{100 * c:g}%" if math.isfinite(c) else ""


def settle_notes(table: pd.DataFrame) -> list[str]:
    """What would settle the inconclusive cells: one line per kind of advice (advice differing only in its
    numbers is one kind), with how many cells and the rounds or spreads it names."""
    if "settle" not in table:
        return []
    advice = table.loc[table["verdict"] == "inconclusive", "settle"].dropna()
    # advice naming a spread past ±50% ("each round varied by ±277%") is a disturbed cell's: its rerun line is
    # disturbed_notes'
    advice = [t for t in advice if not any(float(m.replace(",", "")) >= 100 * DISTURBED_FLOOR
                                           for m in re.findall(r"±([\d,.]+)%", str(t)))]
    kinds: dict[str, list[str]] = {}
    for text in advice:
        kinds.setdefault(re.sub(r"\d[\d,.]*", "#", text), []).append(text)
    lines = []
    for kind, texts in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        # each number of the advice as the range the cells' own numbers span at its place
        places = list(zip(*([x for x in re.findall(r"\d[\d,.]*", t)] for t in texts), strict=True))
        shown = kind
        for found in places:
            values = sorted({float(x.replace(",", "").rstrip(".")) for x in found})
            shown = shown.replace("#", f"{values[0]:,g}" if len(values) == 1 else
                                  f"{values[0]:,g}–{values[-1]:,g}", 1)
        lines.append(f"{len(texts)} inconclusive cell(s) would be settled by {shown}")
    return lines


#: Runs a side whose floors :func:`more_runs_notes` prints.
MORE_RUNS = (3, 5)


def more_runs_notes(table: pd.DataFrame, store: Any, side_a: list[str], side_b: list[str]) -> list[str]:
    """What more runs of each side would see (each side's noise shrinks with the square root of its runs: the
    median undecided cell's floor now and with :data:`MORE_RUNS` runs a side), and the exact commands: each
    side's run again with its own recorded command, then one compare of both sides."""
    undecided = table[table["verdict"] == "inconclusive"]
    noise = pd.to_numeric(undecided.get("noise"), errors="coerce").dropna()
    if noise.empty:
        return []
    now = max(len(side_a), len(side_b))
    sigma = float(noise.median())
    seen = ", ".join(f"±{pct(math.expm1(K_BETWEEN * sigma * math.sqrt(now / k)))} with {k}"
                     for k in MORE_RUNS if k > now)
    if not seen:
        return []
    lines = [f"what more runs would see: the median undecided cell could see ±{pct(math.expm1(K_BETWEEN * sigma))} "
             f"with {now} run(s) a side; about {seen} runs a side (the run-to-run noise shrinks with runs, not "
             "rounds). Run each side's code again with its own command, then compare the sides:"]
    runs = store.runs()
    named, argv = [], None
    for side in (side_a, side_b):
        argv, label = _bench_command(runs, side[-1])
        if argv is None:
            return lines[:1]
        more = [f"{label or side[-1]}-{i}" for i in range(2, 2 + MORE_RUNS[0] - len(side))]
        lines += ["  " + shlex.join(_with_name(argv, extra)) for extra in more]
        named.append(",".join(side + more))
    lines.append("  " + shlex.join(["workbench", "compare", *named] + _store_args(argv)))
    return lines


def _bench_command(runs: pd.DataFrame, run_id: str) -> tuple[list[str] | None, str | None]:
    """The ``bench`` command a run recorded (None where it recorded another, or none) and its name, from the store's
    runs table."""
    row = runs[runs["run_id"] == run_id]
    name = row["name"].iloc[0] if len(row) and "name" in row else None
    name = name if isinstance(name, str) and name else None
    try:
        argv = json.loads(row["argv"].iloc[0]) if len(row) and isinstance(row["argv"].iloc[0], str) else None
    except ValueError:
        return None, name
    ok = isinstance(argv, list) and len(argv) > 1 and argv[1] == "bench"
    return ([str(a) for a in argv] if ok else None), name


def _with_name(argv: list[str], name: str) -> list[str]:
    """``argv`` (a bench command) with ``--name name`` in place of its own; no ``--resume``."""
    out, skip = ["workbench"], False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in ("--name", "--resume"):
            skip = True
            continue
        if not a.startswith(("--name=", "--resume=")):
            out.append(a)
    return out + ["--name", name]


def _store_args(argv: list[str] | None) -> list[str]:
    for i, a in enumerate(argv or []):
        if a == "--store" and i + 1 < len(argv or []):
            return ["--store", (argv or [])[i + 1]]
        if a.startswith("--store="):
            return [a]
    return []


def format_table(table: pd.DataFrame) -> str:
    if table.empty:
        return f"(no cell judged: {table.attrs['unjudged']})" if table.attrs.get("unjudged") else "(no matching cells)"
    cols = [c for c in COLUMNS if c in table] + [c for c in ("baseline_variant", "baseline_backend", "run_id")
                                                  if c in table and table[c].nunique() > 1]
    if {"device_a", "device_b"} <= set(table) and (table["device_a"] != table["device_b"]).any() or "env_id" in table:
        cols[5:5] = ["device_a", "device_b"]  # machines differ: say which is which
    t = table[cols].copy()
    covered = {coverage_text(c) for c in table.get("coverage", pd.Series(dtype=float))} - {""}
    ci = f"{covered.pop()} interval" if len(covered) == 1 else "interval"  # its real coverage, when one
    floors = t.pop("floor")
    shown = [math.isfinite(f) and not is_disturbed(f) for f in floors]  # past ±50% no interval: "disturbed"
    t[ci] = [f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) and ok else ""
             for lo, hi, ok in zip(t.pop("ci_low"), t.pop("ci_high"), shown, strict=True)]
    t["speedup"] = [_speedup_text(x, v, f) for x, v, f in zip(t["speedup"], t["verdict"], floors, strict=True)]
    t["could see"] = [f"±{pct(f)}" if ok else "" for f, ok in zip(floors, shown, strict=True)]
    t["verdict"] = verdict_labels(table)   # with each row's basis: too few rounds at speed reads so, not "disturbed"
    tail = [ci, "could see", "verdict"]
    if _noisy(table).any():
        t["noisy"] = ["~" if x else "" for x in _noisy(table)]
        tail.insert(2, "noisy")
    order = [c for c in t.columns if c not in tail] + tail
    return t[order].to_string(index=False)


def _speedup_text(x: float, verdict: str, floor: float) -> str:
    """The paired speed-up; none where the comparison was disturbed and its direction unsettled."""
    if not math.isfinite(x) or (is_disturbed(floor) and verdict not in ("faster", "slower")):
        return ""
    return f"{x:.3g}x"


def disturbed_notes(table: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """One line for the comparisons whose interval is too wide to inform (past ±50%, printed as "disturbed"): what
    the machine was doing while the rows were measured, and how to rerun; one before it for those that wide because
    the slow host left too few rounds at speed to pair (printed "could not tell (too few rounds at speed ...)")."""
    from workbench.report.claims import disturbance_text, machine_busy

    if "floor" not in table:
        return []
    bases = table["basis"] if "basis" in table else [None] * len(table)
    few = sum(bool(is_disturbed(f) and too_few_words(b)) for f, b in zip(table["floor"], bases, strict=True))
    out = [f"{few} comparison(s) left too few rounds at speed to pair (rounds taken while the host ran slow were set "
           "aside; their intervals rest on an assumed drift, no disturbance, and are not printed): rerun with more "
           "rounds, on a host that keeps its speed"] if few else []
    n = int(sum(reads_disturbed(f, b) for f, b in zip(table["floor"], bases, strict=True)))
    if not n:
        return out
    by = disturbance_text(rows)
    # "comparison(s)", not "cell(s)": a disturbed comparison (its interval) is not a disturbed cell (its quartiles),
    # and readers met the one beside cells that were not the other (issue 39; docs/statistics.md)
    return out + [f"{n} comparison(s) disturbed (intervals of ±{DISTURBED_FLOOR:.0%} or wider are not printed; the "
                  "comparison's interval, whatever its cells' own spread)"
                  f"{f'; the rows record {by}' if by else ''}: {rerun_hint(machine_busy(rows))}"]


def _noisy(table: pd.DataFrame) -> pd.Series:
    if "noisy" not in table:
        return pd.Series(False, index=table.index)
    return table["noisy"].astype("boolean").fillna(False).astype(bool)


def _json_records(table: pd.DataFrame) -> list[JsonObject]:
    return json.loads(table.to_json(orient="records", double_precision=15))

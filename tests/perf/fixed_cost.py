"""A sweep's fixed cost: what a run costs beyond its cells (start-up, probes, worker starts, and the
restarts after a crash or a hang), on a user catalog with one crashing and one hanging variant.

    python tests/perf/fixed_cost.py            # the 12-cell user catalog, then the reference import
    python tests/perf/fixed_cost.py --reps 2   # alternate with the reference, medians
    python tests/perf/fixed_cost.py --isolation-suite quick   # also: worker isolation's cost on a suite

The catalog is written to a temporary folder and loaded the way a user's is (``WORKBENCH_CATALOG``): one
kernel (vector_add's spec under another name) with six numpy variants (four honest ones, one that
segfaults, one that never returns) at two sizes: 12 cells. It runs as a user runs it, ``workbench bench``
in a fresh process with the defaults (3 rounds, no --timeout), into a fresh store.

Printed: the command's wall and CPU time (its own and its workers', from ``os.wait4``); the measured cells'
own wall time (the stored rows' ``wall_s``: the rounds' times inside the worker, summed by the merge); the
fixed cost (wall minus the measured cells: start-up, probes, worker starts, and the crashed and hung cells'
time, the wait for a hang included); and the reference, ``python -c "import pandas, matplotlib.pyplot"``, timed in the
same run just before. Issue 25's target: fixed cost <= 10 s. ``--isolation-suite``: the suite through
``workbench bench`` in-process and in worker processes, alternating (tests/perf/isolation.py's ``suite``), beside
the reference; issue 25's target: worker processes <= +10% of the in-process wall time. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SPEC = '''
import dataclasses
from workbench.catalog import get_kernel, kernel_here

SPEC = kernel_here(__file__).register(
    lambda name: dataclasses.replace(get_kernel("vector_add"), name=name, llm_params=None,
                                     description="out = a + b (a user's kernel)",
                                     sizes={"verify": [{"n": 1001}], "quick": [{"n": 4096}, {"n": 1 << 20}]}))
'''

VARIANTS = '''
import ctypes

import numpy as np

from workbench.catalog import kernel_here

op = kernel_here(__file__)


def _numpy(name):
    def deco(make_run):
        op.variant(name, "numpy", description=name)(lambda ctx: make_run())
        return make_run
    return deco


@_numpy("add")
def add():
    return lambda i, o: np.add(i["a"], i["b"], out=o["out"])


@_numpy("add-copy")
def add_copy():
    def run(i, o):
        o["out"][...] = i["a"] + i["b"]
    return run


@_numpy("add-sum")
def add_sum():
    def run(i, o):
        np.sum(np.stack([i["a"], i["b"]]), axis=0, out=o["out"])
    return run


@_numpy("add-inplace")
def add_inplace():
    def run(i, o):
        o["out"][...] = i["a"]
        o["out"] += i["b"]
    return run


@_numpy("segfault")
def segfault():
    def run(i, o):
        np.add(i["a"], i["b"], out=o["out"])
        ctypes.string_at(0)
    return run


@_numpy("hang")
def hang():
    def run(i, o):
        while True:
            pass
    return run
'''

KERNEL = "fc_user_add"
#: Cells that ended without a measurement: their time (a hang's wait, a crash) is part of the fixed cost.
FAILED = ("crashed", "timeout", "oom", "error")


def write_catalog(root: Path) -> Path:
    folder = root / "catalog" / KERNEL
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC)
    (folder / "numpy_variants.py").write_text(VARIANTS)
    return folder.parent


def timed_cpu(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (user + system, from ``os.wait4``: the child and the workers it waited for)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return wall, ru.ru_utime + ru.ru_stime, subprocess.CompletedProcess(cmd, proc.returncode, out.read(),
                                                                             err.read())


def cells_of(store: Path) -> list[dict]:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("select variant, params, status, wall_s, extra from results")]
    con.close()
    return rows


def one_run(tmp: Path, env: dict[str, str], repo: Path, tag: str, extra: list[str]) -> dict:
    store = tmp / f"fixed-{tag}.sqlite"
    cmd = [sys.executable, "-m", "workbench", "bench", "--kernels", KERNEL, "--backends", "numpy",
           "--store", str(store), "--quiet", *extra]
    wall, cpu, done = timed_cpu(cmd, env, repo)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-3000:]}")
    rows = cells_of(store)
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    walls = [(float(r["wall_s"] or 0.0), r["variant"], json.loads(r["params"] or "{}").get("n"), r["status"])
             for r in rows]
    return {"wall": wall, "cpu": cpu, "n": len(rows), "statuses": statuses,
            "cells": sum(w for w, *_, s in walls if s not in FAILED),
            "failed": sum(w for w, *_, s in walls if s in FAILED), "slow": sorted(walls, reverse=True)[:4]}


def isolation_cost(suite: str, reps: int, extra: list[str], refs: list[tuple[float, float]]) -> None:
    """``workbench bench --suite SUITE`` in-process and in worker processes, a fresh process each, the order
    alternating between repetitions and the reference import timed before each pair; wall and CPU (workers
    included) of each, and the worker processes' cost relative to in-process."""
    got: dict[str, list[tuple[float, float]]] = {"in-process": [], "process": []}
    with tempfile.TemporaryDirectory() as d:
        for r in range(reps):
            rw, rc, _ = timed_cpu([sys.executable, "-c", "import pandas, matplotlib.pyplot"], dict(os.environ), ROOT)
            refs.append((rw, rc))
            print(f"suite rep {r}: reference import {rw:.2f} s wall / {rc:.2f} s CPU; load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            for iso in (("in-process", "process") if r % 2 == 0 else ("process", "in-process")):
                cmd = [sys.executable, "-m", "workbench", "bench", "--suite", suite, "--quiet", "--isolation", iso,
                       "--store", str(Path(d) / f"{iso}-{r}.sqlite"), *extra]
                wall, cpu, done = timed_cpu(cmd, dict(os.environ), ROOT)
                if done.returncode not in (0, 1):
                    raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
                got[iso].append((wall, cpu))
                print(f"  {suite} {' '.join(extra)} {iso}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    med = statistics.median
    (aw, ac), (bw, bc) = ((med(w for w, _ in got[i]), med(c for _, c in got[i])) for i in ("in-process", "process"))
    print(f"{suite} {' '.join(extra)}, median of {reps}: in-process {aw:.1f} s wall / {ac:.1f} s CPU, worker "
          f"processes {bw:.1f} s wall / {bc:.1f} s CPU: {100 * (bw / aw - 1):+.1f}% wall, {100 * (bc / ac - 1):+.1f}% "
          "CPU (target <= +10% wall)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=1, help="repetitions of the user catalog's sweep (0: none)")
    ap.add_argument("--repo", nargs="+", type=Path, default=[ROOT],
                    help="trees to measure, interleaved in each repetition (e.g. a `git archive` of the "
                         "commit before a change, and this one)")
    ap.add_argument("--isolation-suite", metavar="SUITE", help="also time SUITE in-process and in worker processes")
    ap.add_argument("--suite-reps", type=int, default=1)
    ap.add_argument("--suite-args", default="",
                    help="extra `workbench bench` arguments for the suite (e.g. '--kernels saxpy softmax': a part of "
                         "it, on a busy machine)")
    ap.add_argument("--bench-args", default="", help="extra `workbench bench` arguments (e.g. '--timeout 60')")
    args = ap.parse_args()
    print("load before:", " ".join(f"{x:.1f}" for x in os.getloadavg()), f"({os.cpu_count()} CPUs)", flush=True)
    refs: list[tuple[float, float]] = []
    runs: dict[Path, list[dict]] = {repo: [] for repo in args.repo}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        catalog = str(write_catalog(tmp))
        for r in range(args.reps):
            env = dict(os.environ, WORKBENCH_CATALOG=catalog)
            rw, rc, _ = timed_cpu([sys.executable, "-c", "import pandas, matplotlib.pyplot"], env, ROOT)
            refs.append((rw, rc))
            print(f"rep {r}: reference import {rw:.2f} s wall / {rc:.2f} s CPU", flush=True)
            for repo in (args.repo if r % 2 == 0 else list(reversed(args.repo))):
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))
                run = one_run(tmp, env, repo, f"{len(runs[repo])}-{abs(hash(repo))}", args.bench_args.split())
                runs[repo].append(run)
                print(f"  {repo}: sweep {run['wall']:.1f} s wall / {run['cpu']:.1f} s CPU; {run['n']} cells "
                      f"{run['statuses']}; the measured ones' own wall {run['cells']:.1f} s, the crashed and hung "
                      f"ones' {run['failed']:.1f} s; fixed cost {run['wall'] - run['cells']:.1f} s", flush=True)
                print("    longest cells (wall s, variant, n, status):",
                      "; ".join(f"{w:.1f} {v} {n} {s}" for w, v, n, s in run["slow"]), flush=True)
    if args.isolation_suite:
        isolation_cost(args.isolation_suite, args.suite_reps, args.suite_args.split(), refs)
    print("load after:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    med = statistics.median
    ref_wall, ref_cpu = med(w for w, _ in refs), med(c for _, c in refs)
    print(f"reference import (median of {len(refs)}): {ref_wall:.2f} s wall, {ref_cpu:.2f} s CPU")
    for repo, got in runs.items():
        if not got:
            continue
        fixed = med(x["wall"] - x["cells"] for x in got)
        print(f"{repo}: fixed cost {fixed:.1f} s (median of {len(got)}; target <= 10 s; {fixed / ref_wall:.1f}x the "
              f"reference); sweep {med(x['wall'] for x in got):.1f} s wall, {med(x['cpu'] for x in got):.1f} s CPU; "
              f"measured cells {med(x['cells'] for x in got):.1f} s, crashed and hung cells "
              f"{med(x['failed'] for x in got):.1f} s")


if __name__ == "__main__":
    main()

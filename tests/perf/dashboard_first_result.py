"""How long the dashboard takes from Run to its first result row, for one kernel on two backends.

    python tests/perf/dashboard_first_result.py                       # softmax on numpy and torch-cpu
    python tests/perf/dashboard_first_result.py --kernel saxpy --backends numpy numba --reps 2

The dashboard is driven as a notebook drives it, without a browser: a :class:`workbench.ui.Dashboard` with
its default sizes, budget and isolation (worker processes), ``run()`` pressed, and the time taken until its
results table is first drawn with a row (the table's ``update`` is watched; it runs on the sweep's thread
right after the row is stored). Printed beside it, in the same run and just before, the reference
``python -c "import pandas, matplotlib.pyplot"``, and the load. Issue 25's target: first result <= 10 s after
Run. Each repetition is a fresh process (nothing warm from the one before). Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, os, sys, threading, time
sys.path.insert(0, {root!r})
t_import = time.perf_counter()
from workbench.ui import Dashboard
t_built = time.perf_counter()
d = Dashboard(store={store!r}, kernel={kernel!r}, backends={backends!r}, export_dir={tmp!r})
t_ready = time.perf_counter()
first = {{}}
seen = threading.Event()
update = d.table.update

def watched(df):
    out = update(df)
    if len(df) and not seen.is_set():
        first["t"] = time.perf_counter()
        first["row"] = {{k: str(df.iloc[0].get(k)) for k in ("variant", "backend", "status")}}
        first["label"] = d.running_label.value
        seen.set()
    return out

d.table.update = watched
t_run = time.perf_counter()
d.run()
t_returned = time.perf_counter()
seen.wait(600)
d.cancel()
d.wait(120)
print(json.dumps({{"import_s": t_built - t_import, "construct_s": t_ready - t_built,
                  "run_returns_s": t_returned - t_run,
                  "first_result_s": first.get("t", float("nan")) - t_run, "row": first.get("row"),
                  "cells": d._real_cells}}))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="softmax")
    ap.add_argument("--backends", nargs="+", default=["numpy", "torch-cpu"])
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    print("load before:", " ".join(f"{x:.1f}" for x in os.getloadavg()), f"({os.cpu_count()} CPUs)", flush=True)
    refs, firsts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.reps):
            t0 = time.perf_counter()
            ref = subprocess.run([sys.executable, "-c", "import pandas, matplotlib.pyplot"], env=env)
            ref_s = time.perf_counter() - t0
            if ref.returncode:
                raise SystemExit("the reference import failed")
            refs.append(ref_s)
            code = CHILD.format(root=str(ROOT), store=str(Path(tmp) / f"dash-{r}.sqlite"), kernel=args.kernel,
                                backends=list(args.backends), tmp=tmp)
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if done.returncode:
                raise SystemExit(f"the dashboard run failed: {done.stderr[-3000:]}")
            got = json.loads(done.stdout.strip().splitlines()[-1])
            firsts.append(got["first_result_s"])
            print(f"rep {r}: reference import {ref_s:.2f} s; dashboard import {got['import_s']:.2f} s, built in "
                  f"{got['construct_s']:.2f} s, run() returned in {got['run_returns_s']:.2f} s, first result row "
                  f"{got['first_result_s']:.1f} s after Run ({got['row']}; {got['cells']} cells); process "
                  f"{wall:.1f} s", flush=True)
    print("load after:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    med = statistics.median
    print(f"{args.kernel} on {' and '.join(args.backends)}: first result {med(firsts):.1f} s after Run "
          f"(median of {len(firsts)}; target <= 10 s); reference import {med(refs):.2f} s; "
          f"ratio {med(firsts) / med(refs):.1f}x")


if __name__ == "__main__":
    main()

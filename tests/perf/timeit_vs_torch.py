"""``workbench.timeit`` against ``torch.utils.benchmark`` at the same thread count — a benchmark, not a test.

    .venv/bin/python tests/perf/timeit_vs_torch.py [--pairs 7] [--threads 1,2] [--size 1048576]

gelu on a 1M-element float32 torch tensor (issue 22: timeit read 11.8x the Timer when they ran different
thread counts). For each thread count, in one process with ``torch.set_num_threads(n)`` and the Timer's
``num_threads=n``, ``--pairs`` interleaved pairs in alternating order: ``workbench.timeit(f, x)`` and
``Timer("f(x)").adaptive_autorange()``. Printed: each side's median, the median of the per-pair ratios
(target: within 5%), the threads timeit reports, and the share of a core this process got while it ran
(CPU time / wall time per thread: under 1.0 the machine was busy and other processes took the rest).

Why the share matters: the Timer reports the mean of blocks of many calls, timeit the median of single
calls (samples of at least 100 µs). A call preempted by another process makes one slow single-call sample,
which the median ignores, while it lengthens the block it falls in. On a busy machine the Timer therefore
reads high by about the time the process waited for a core; on an idle one the two agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, os, statistics, sys, time
import workbench
import torch
import torch.utils.benchmark as tb

threads, pairs, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
x = torch.randn(size)
f = torch.nn.functional.gelu


def ours():
    return workbench.timeit(f, x).median_s


def theirs():
    return tb.Timer("f(x)", globals={"f": f, "x": x}, num_threads=threads).adaptive_autorange().median


ours(), theirs()  # first calls: lazy initialisation on both sides
rows = []
for i in range(pairs):
    t0, c0 = time.perf_counter(), time.process_time()
    order = (ours, theirs) if i % 2 == 0 else (theirs, ours)
    got = {fn.__name__: fn() for fn in order}
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows.append({"ours": got["ours"], "theirs": got["theirs"], "ratio": got["ours"] / got["theirs"],
                 "core_share": cpu / wall / threads})
m = workbench.timeit(f, x)
print(json.dumps({"threads": threads, "torch_threads": torch.get_num_threads(), "reported": m.threads,
                  "rows": rows}))
'''


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=7, help="interleaved pairs per thread count")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--size", type=int, default=1 << 20, help="elements of the tensor")
    args = ap.parse_args(argv)
    within = True
    print(f"uptime before: {uptime()}", flush=True)
    for n in (int(t) for t in args.threads.split(",")):
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        res = subprocess.run([sys.executable, "-c", CHILD, str(n), str(args.pairs), str(args.size)], cwd=REPO,
                             capture_output=True, text=True, env=env)
        if res.returncode != 0:
            print(f"{n} thread(s): failed: {res.stderr[-1500:]}")
            return 2
        r = json.loads(res.stdout.strip().splitlines()[-1])
        ratio = statistics.median(x["ratio"] for x in r["rows"])
        share = statistics.median(x["core_share"] for x in r["rows"])
        ok = abs(ratio - 1) <= 0.05
        within &= ok
        print(f"gelu on {args.size:,} float32 at {n} thread(s) (torch.get_num_threads() = {r['torch_threads']}): "
              f"workbench.timeit {statistics.median(x['ours'] for x in r['rows']) * 1e6:.0f} us, "
              f"torch.utils.benchmark {statistics.median(x['theirs'] for x in r['rows']) * 1e6:.0f} us; "
              f"ratio (median of {len(r['rows'])} interleaved pairs) {ratio:.3f}: "
              f"{'within' if ok else 'NOT within'} 5%; per-pair ratios "
              f"{', '.join(format(x['ratio'], '.2f') for x in r['rows'])}; this process got {share:.2f} of a core per "
              f"thread; timeit reported threads: {r['reported']}", flush=True)
        time.sleep(0.5)
    print(f"uptime after: {uptime()}")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())

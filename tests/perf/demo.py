"""The demo in two minutes (issue 25) — a benchmark script, not a test: prints each target beside its figure
and a reference measured in the same run.

    .venv/bin/python tests/perf/demo.py [--no-verify] [--keep DIR]

Runs what ``make demo`` runs on an installed venv — ``workbench info``, ``workbench verify``, ``workbench bench
--suite quick --report ... --json ...`` — in a temporary folder with an empty workbench cache
(``XDG_CACHE_HOME``: no cached info probe or ceilings, as on a fresh clone), timing each step; samples the
summed proportional memory (``Pss`` of ``/proc/PID/smaps_rollup``) of the bench process and its workers
every 0.2 s; then times one numpy cell through the CLI against ``python -c "import pandas,
matplotlib.pyplot"`` (the reference: three runs each, medians), and the quick suite on numpy alone (the
acceptance test's fixture, whose 120 s target moved here). Prints ``uptime`` before and after: the targets
are for an idle machine and one with a busy core.
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
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = [sys.executable, "-m", "workbench"]
REFERENCE = [sys.executable, "-c", "import pandas, matplotlib.pyplot"]
ONE_CELL = ["bench", "--kernels", "softmax", "--backends", "numpy", "--sizes", "1024x1024", "--budget", "0.05"]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pss_bytes(pid: int) -> int:
    """Summed Pss of ``pid`` and its descendants (shared libraries counted once across them)."""
    import psutil

    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            for line in Path(f"/proc/{p.pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
    return total


def timed(cmd: list[str], env: dict[str, str], cwd: Path, sample_memory: bool = False) -> tuple[float, int, int]:
    """(wall seconds, exit code, peak summed PSS in bytes when sampled) of ``cmd``, its output to a log."""
    log = cwd / f"{int(time.time() * 1000)}.log"
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        peak = [0]

        def watch() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], pss_bytes(proc.pid))
                time.sleep(0.2)

        watcher = threading.Thread(target=watch, daemon=True) if sample_memory else None
        if watcher:
            watcher.start()
        rc = proc.wait()
        if watcher:
            watcher.join()
    wall = time.perf_counter() - t0
    if rc != 0:
        print(f"  ! {' '.join(cmd[2:])} exited {rc}; the end of its output:\n" + log.read_text()[-2000:])
    return wall, rc, peak[0]


def median_wall(cmd: list[str], env: dict[str, str], cwd: Path, n: int = 3) -> float:
    return statistics.median(timed(cmd, env, cwd)[0] for _ in range(n))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-verify", action="store_true", help="leave `workbench verify` out of the demo")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temporary folder")
    args = ap.parse_args()
    print(f"uptime before: {uptime()}", flush=True)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="wb-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), PYTHONPATH=str(REPO))
    store, report, js = work / "results.sqlite", work / "quick.html", work / "quick.json"

    ref = median_wall(REFERENCE, env, work)
    print(f"reference: python -c 'import pandas, matplotlib.pyplot': {ref:.2f} s (median of 3)", flush=True)

    steps = [("info", ["info"], False)]
    if not args.no_verify:
        steps.append(("verify", ["verify"], False))
    steps.append(("quick suite + report", ["bench", "--suite", "quick", "--store", str(store), "--report", str(report),
                                           "--json", str(js)], True))
    walls: dict[str, float] = {}
    peak_pss = 0
    for name, argv, sample in steps:
        wall, rc, peak = timed(WORKBENCH + argv, env, work, sample_memory=sample)
        walls[name] = wall
        peak_pss = max(peak_pss, peak)
        print(f"  {name:<22} {wall:7.1f} s{'' if rc == 0 else f'  (exit {rc})'}", flush=True)
    demo = sum(walls.values())
    info_warm = timed(WORKBENCH + ["info"], env, work)[0]

    cells = rounds = 0
    if store.exists():
        with sqlite3.connect(store) as db:
            cells, rounds = db.execute("select count(*), max(rounds) from results").fetchone()
    size = report.stat().st_size if report.exists() else 0
    one = median_wall(WORKBENCH + ONE_CELL + ["--store", str(work / "one.sqlite")], env, work)
    numpy_only = timed(WORKBENCH + ["bench", "--suite", "quick", "--backends", "numpy", "--store",
                                    str(work / "numpy.sqlite")], env, work)[0]

    rows = [
        ("make demo equivalent (info, verify, quick, report)" if not args.no_verify else
         "make demo without verify (info, quick, report)", f"{demo:.0f} s", "<= 120 s idle, <= 300 s with a busy core",
         f"{demo / ref:.0f}x the reference"),
        ("  workbench info, cold / cached probe", f"{walls['info']:.1f} s / {info_warm:.1f} s", "(4.7 s before)", ""),
        ("one numpy cell through the CLI", f"{one:.2f} s", "<= 2x the reference", f"{one / ref:.2f}x the reference"),
        ("quick suite cells", f"{cells} x {rounds or 0} rounds", "about 100-150", ""),
        ("quick suite on numpy only (tests/acceptance fixture)", f"{numpy_only:.0f} s", "<= 120 s idle", ""),
        ("quick report size", f"{size / 1e6:.2f} MB", "<= 1 MB", ""),
        ("peak summed PSS, bench + workers", f"{peak_pss / 2**30:.2f} GiB", "<= 2 GB", ""),
    ]
    print("\nfigure                                               measured            target"
          "                                 beside the reference")
    for what, got, target, vs in rows:
        print(f"{what:<52} {got:<19} {target:<38} {vs}")
    print(f"\nreference (import pandas, matplotlib.pyplot): {ref:.2f} s; steps: "
          + json.dumps({k: round(v, 1) for k, v in walls.items()}))
    print(f"uptime after: {uptime()}")
    print(f"work folder: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

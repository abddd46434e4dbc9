"""The demo in two minutes (issue 25) — a benchmark script, not a test: prints each target beside its figure
and a reference measured in the same run.

    .venv/bin/python tests/perf/demo.py [--no-verify] [--keep DIR] [--repo TREE] [--skip-extras]

Runs what ``make demo`` runs on an installed venv — the ``workbench`` lines of the Makefile's ``demo`` target
(``info``, the demo's ``verify``, ``bench --suite quick --report ... --json ...``), read from the Makefile of
the tree measured — in a temporary folder with an empty workbench cache (``XDG_CACHE_HOME``: no cached info
probe or ceilings, as on a fresh clone), timing each step. While the quick suite runs it samples every 0.2 s:

- the summed proportional memory (``Pss`` of ``/proc/PID/smaps_rollup``) of the bench process and its
  workers, the peak of each worker by backend (told from the runtime libraries it maps), and the size of the
  sweep's shared input folders (``/dev/shm/workbench-inputs-*``: memory that no process's PSS shows
  unless mapped);
- the store (rows and rounds stored), to split the bench step into its phases: *plan* (start to the first
  worker process: imports, backend probes, the suite's plan), *set-up* (to the first stored row: worker
  start-up, ceilings probe, first cell), *cells* (to the last stored round) and *report* (to the end:
  summary, report and JSON).

Then it times one numpy cell through the CLI against ``python -c "import pandas, matplotlib.pyplot"`` (the
reference, interleaved with it, three runs each, medians), and the quick suite on numpy alone (the acceptance
test's fixture). The reference is timed again before each step, and each step is printed beside the
nearest reference, so that a load that changes during the run shows as a changing reference. ``--repo``
measures another tree (e.g. ``git archive`` of an older commit) with this same script, for before/after
figures side by side. Prints ``uptime`` before and after: the targets are for an idle machine and one with a
busy core.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = [sys.executable, "-c", "import pandas, matplotlib.pyplot"]
ONE_CELL = ["bench", "--kernels", "softmax", "--backends", "numpy", "--sizes", "1024x1024", "--budget", "0.05"]
#: Runtime libraries a worker maps, in the order they are looked for, and the backend each tells.
WORKER_LIBS = (("libtorch_cpu", "torch"), ("libpocl", "opencl"), ("libwgpu", "vulkan"), ("libllvmlite", "numba"))
SHM = Path("/dev/shm")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def demo_commands(repo: Path) -> list[list[str]]:
    """The ``workbench`` command lines of the ``demo`` target of ``repo``'s Makefile (continuations joined)."""
    text = (repo / "Makefile").read_text().replace("\\\n", " ")
    body = re.search(r"^demo:.*\n((?:\t.*\n)+)", text, flags=re.MULTILINE)
    if body is None:
        raise SystemExit(f"no demo target in {repo / 'Makefile'}")
    out = []
    for line in body.group(1).splitlines():
        words = shlex.split(line.strip())
        if words and words[0].endswith("/workbench"):
            out.append(words[1:])
    return out


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def worker_label(pid: int) -> str:
    """The backend a worker process serves, told from the runtime libraries it maps (numpy: none of them)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return "?"
    return next((name for lib, name in WORKER_LIBS if lib in maps), "numpy")


def shm_bytes(pid: int) -> int:
    """Bytes in the shared input folders of the sweep run by process ``pid`` (others' sweeps left out)."""
    total = 0
    for d in SHM.glob(f"workbench-inputs-{pid}-*"):
        for root, _, files in os.walk(d):  # entries come and go while it walks: os.walk skips what vanished
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    pass
    return total


class Watch:
    """Samples a bench process: summed PSS (and each worker's), shared inputs, and the store's progress."""

    def __init__(self, proc: subprocess.Popen, store: Path | None, t0: float) -> None:
        import psutil

        self.proc, self.store, self.t0, self.psutil = proc, store, t0, psutil
        self.peak_kib = 0
        self.peak_shm = 0
        self.by_worker: dict[str, int] = defaultdict(int)  # label -> peak PSS KiB of one such worker
        self.max_workers = 0
        self.first_worker_s: float | None = None
        self.first_row_s: float | None = None
        self.last_change_s: float | None = None
        self._progress: tuple[int, int] | None = None
        self._labels: dict[int, str] = {}

    def sample(self) -> None:
        try:
            children = self.psutil.Process(self.proc.pid).children(recursive=True)
        except self.psutil.Error:
            return
        now = time.perf_counter() - self.t0
        workers = [c.pid for c in children]
        if workers and self.first_worker_s is None:
            self.first_worker_s = now
        self.max_workers = max(self.max_workers, len(workers))
        total = pss_kib(self.proc.pid)
        self.by_worker["parent (bench)"] = max(self.by_worker["parent (bench)"], total)
        for pid in workers:
            kib = pss_kib(pid)
            total += kib
            if pid not in self._labels or self._labels[pid] == "numpy":  # a runtime maps its library late
                self._labels[pid] = worker_label(pid)
            self.by_worker[self._labels[pid]] = max(self.by_worker[self._labels[pid]], kib)
        self.peak_kib = max(self.peak_kib, total)
        self.peak_shm = max(self.peak_shm, shm_bytes(self.proc.pid))
        self._store_progress(now)

    def _store_progress(self, now: float) -> None:
        if self.store is None or not self.store.exists():
            return
        try:
            with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=0.1) as db:
                got = db.execute("select count(*), coalesce(sum(rounds), 0) from results").fetchone()
        except sqlite3.Error:
            return
        progress = (int(got[0]), int(got[1]))
        if progress[0] and self.first_row_s is None:
            self.first_row_s = now
        if progress != self._progress and progress[0]:
            self.last_change_s = now
        self._progress = progress

    def loop(self) -> None:
        while self.proc.poll() is None:
            try:
                self.sample()
            except (OSError, ValueError) as exc:  # a process or file gone between listing and reading it
                print(f"  (a sample failed: {exc})", file=sys.stderr)
            time.sleep(0.2)


#: CPU seconds (user + system) of each command timed, with its workers: load from other work moves it far less
#: than wall time, so it is printed beside the walls.
CPU: dict[str, float] = {}


def timed(cmd: list[str], env: dict[str, str], cwd: Path, store: Path | None = None,
          watch: bool = False) -> tuple[float, int, Watch | None]:
    """(wall seconds, exit code, the samples when ``watch``) of ``cmd``, its output to a log; its CPU seconds
    (with the worker processes it waited for) go to :data:`CPU` under its command line."""
    log = cwd / f"{int(time.time() * 1000)}.log"
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        w = Watch(proc, store, t0) if watch else None
        thread = threading.Thread(target=w.loop, daemon=True) if w else None
        if thread:
            thread.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        CPU[" ".join(cmd[2:])] = usage.ru_utime + usage.ru_stime
        if thread:
            thread.join()
    wall = time.perf_counter() - t0
    if rc != 0:
        print(f"  ! {' '.join(cmd[2:])} exited {rc}; the end of its output:\n" + log.read_text()[-2000:])
    return wall, rc, w


def reference(env: dict[str, str], cwd: Path) -> float:
    return timed(REFERENCE, env, cwd)[0]


def interleaved(cmd: list[str], env: dict[str, str], cwd: Path, n: int = 3) -> tuple[float, float]:
    """Medians of (``cmd``, the reference), run alternately ``n`` times each."""
    a, b = [], []
    for _ in range(n):
        a.append(timed(cmd, env, cwd)[0])
        b.append(reference(env, cwd))
    return statistics.median(a), statistics.median(b)


def row_times(store: Path) -> tuple[int, int, dict[str, float]]:
    """(cells, rounds, seconds of cell wall time per backend) of the store's rows."""
    if not store.exists():
        return 0, 0, {}
    with sqlite3.connect(store) as db:
        cells, rounds = db.execute("select count(*), max(rounds) from results").fetchone()
        per = dict(db.execute("select backend, sum(wall_s) from results group by backend order by 2 desc"))
    return int(cells or 0), int(rounds or 0), {k: float(v or 0) for k, v in per.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-verify", action="store_true", help="leave the demo's `workbench verify` out")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temporary folder")
    ap.add_argument("--repo", metavar="TREE", default=str(REPO), help="the source tree to measure (default: this one)")
    ap.add_argument("--skip-extras", action="store_true",
                    help="only the demo's steps: not the one-cell and numpy-only figures")
    args = ap.parse_args()
    repo = Path(args.repo).resolve()
    print(f"tree: {repo}\nuptime before: {uptime()}", flush=True)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="wb-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), PYTHONPATH=str(repo))
    env.pop("WORKBENCH_STORE", None)
    workbench = [sys.executable, "-m", "workbench"]
    store, report, js = work / "results.sqlite", work / "quick.html", work / "quick.json"

    steps: list[tuple[str, list[str]]] = []
    for argv in demo_commands(repo):
        if argv[0] == "verify" and args.no_verify:
            continue
        if argv[0] == "bench":  # the Makefile's reports/ paths, moved into the work folder
            argv = [*argv]
            for flag, path in (("--store", store), ("--report", report), ("--json", js)):
                if flag in argv:
                    argv[argv.index(flag) + 1] = str(path)
        steps.append((argv[0] if argv[0] != "bench" else "quick suite + report", argv))
    print("steps: " + "; ".join("workbench " + " ".join(a) for _, a in steps), flush=True)

    walls: dict[str, float] = {}
    cpu: dict[str, float] = {}
    refs: dict[str, float] = {}
    watch: Watch | None = None
    for name, argv in steps:
        refs[name] = reference(env, work)
        bench = argv[0] == "bench"
        wall, rc, w = timed(workbench + argv, env, work, store=store if bench else None, watch=bench)
        walls[name] = wall
        cpu[name] = CPU[" ".join((workbench + argv)[2:])]
        watch = w or watch
        print(f"  {name:<22} {wall:7.1f} s{'' if rc == 0 else f'  (exit {rc})'}   reference {refs[name]:.2f} s "
              f"-> {wall / refs[name]:.0f}x; CPU {cpu[name]:.1f} s", flush=True)
        if w is not None:
            plan = w.first_worker_s or 0.0
            setup = (w.first_row_s or wall) - plan
            cells = (w.last_change_s or wall) - (w.first_row_s or wall)
            print(f"    plan (imports, probes, the suite's cells) {plan:6.1f} s\n"
                  f"    set-up (workers, ceilings, first cell)    {setup:6.1f} s\n"
                  f"    cells (to the last stored round)          {cells:6.1f} s\n"
                  f"    summary, report and JSON                  {wall - (w.last_change_s or wall):6.1f} s",
                  flush=True)
    demo = sum(walls.values())
    info_warm = timed(workbench + ["info"], env, work)[0] if "info" in walls else float("nan")

    cells, rounds, per_backend = row_times(store)
    size = report.stat().st_size if report.exists() else 0
    ref_end = reference(env, work)
    one = one_ref = numpy_only = float("nan")
    if not args.skip_extras:
        one, one_ref = interleaved(workbench + ONE_CELL + ["--store", str(work / "one.sqlite")], env, work)
        numpy_only = timed(workbench + ["bench", "--suite", "quick", "--backends", "numpy", "--store",
                                        str(work / "numpy.sqlite")], env, work)[0]
    ref = statistics.median([*refs.values(), ref_end])

    label = ("make demo equivalent (" + ", ".join(n for n, _ in steps) + ")")
    rows = [
        (label, f"{demo:.0f} s", "<= 120 s idle, <= 300 s with a busy core", f"{demo / ref:.0f}x the reference"),
        *((f"  {n}", f"{walls[n]:.1f} s", f"CPU {cpu[n]:.1f} s",
           f"{walls[n] / refs[n]:.1f}x its reference ({refs[n]:.2f} s)")
          for n, _ in steps),
        ("  workbench info, cold / cached probe", f"{walls.get('info', float('nan')):.1f} s / {info_warm:.1f} s",
         "", ""),
        ("one numpy cell through the CLI", f"{one:.2f} s", "<= 2x the reference",
         f"{one / one_ref:.2f}x the reference ({one_ref:.2f} s, interleaved)"),
        ("quick suite cells", f"{cells} x {rounds} rounds", "about 100-150", ""),
        ("quick suite on numpy only (tests/acceptance fixture)", f"{numpy_only:.0f} s", "<= 120 s idle", ""),
        ("quick report size", f"{size / 1e6:.2f} MB", "<= 1 MB", ""),
        ("peak summed PSS, bench + workers", f"{(watch.peak_kib if watch else 0) / 2**20:.2f} GiB", "<= 2 GB", ""),
    ]
    print("\nfigure                                               measured            target"
          "                                   beside the reference")
    for what, got, target, vs in rows:
        print(f"{what:<52} {got:<19} {target:<40} {vs}")
    if watch is not None:
        print(f"\nworkers at once: {watch.max_workers}; peak PSS of the parent and of one worker by backend (MiB): "
              + ", ".join(f"{k} {v / 1024:.0f}" for k, v in sorted(watch.by_worker.items(), key=lambda kv: -kv[1]))
              + f"; shared input folders at most {watch.peak_shm / 2**20:.0f} MiB (/dev/shm, not in PSS unless mapped)")
    print("cell wall time by backend (s, all rounds): " + ", ".join(f"{k} {v:.0f}" for k, v in per_backend.items()))
    print(f"\nreference (import pandas, matplotlib.pyplot): median {ref:.2f} s; before each step: "
          + json.dumps({k: round(v, 2) for k, v in refs.items()}) + f"; at the end {ref_end:.2f} s")
    print("steps (s): " + json.dumps({k: round(v, 1) for k, v in walls.items()}) + "; CPU s: "
          + json.dumps({k: round(v, 1) for k, v in cpu.items()}) + f"; demo CPU {sum(cpu.values()):.0f} s")
    print(f"uptime after: {uptime()}")
    print(f"work folder: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

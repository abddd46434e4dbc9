"""Start-up cost of the CLI against ``import pandas, matplotlib.pyplot`` — a benchmark script, not a test.

    .venv/bin/python tests/perf/startup.py [--runs 5] [--numba]

Each command runs as a fresh child process, the commands interleaved round by
round (so a burst of load from elsewhere hits them all alike), after one
untimed warm-up round that fills the page cache. Per command it prints the
median wall time, the median peak resident memory of the child (``ru_maxrss``
from ``os.wait4``, so one child's figure never leaks into another's) and both
as ratios of the baseline. The targets of issue 8: one numpy cell through the
CLI costs at most 2x the baseline's wall time and 2.5x its peak memory.
``workbench info`` (and, with ``--numba``, the same cell on numba) are listed
for information only. Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASELINE = "import pandas, matplotlib.pyplot"


@dataclass
class Command:
    label: str
    #: Called once per run: the bench commands get a fresh store every time.
    argv: Callable[[], list[str]]
    #: (max wall ratio, max peak-memory ratio) against the baseline, or None for information only.
    target: tuple[float, float] | None = None
    walls: list[float] = field(default_factory=list)
    peaks_mb: list[float] = field(default_factory=list)


def bench_argv(backend: str, store: Path) -> list[str]:
    return [sys.executable, "-m", "workbench", "bench", "--kernels", "softmax", "--backends", backend,
            "--sizes", "1024x1024", "--budget", "0.05", "--quiet", "--store", str(store)]


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child; raises with its stderr if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err.decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024  # Linux reports KiB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed rounds (median of these)")
    ap.add_argument("--numba", action="store_true", help="also time the one-cell bench on numba (information)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="wb-startup-") as tmp:
        numbers = count()

        def bench(backend: str) -> Callable[[], list[str]]:
            return lambda: bench_argv(backend, Path(tmp) / f"store-{next(numbers)}.sqlite")

        baseline = Command(f"python -c '{BASELINE}'", lambda: [sys.executable, "-c", BASELINE])
        commands = [baseline,
                    Command("workbench bench softmax numpy 1024x1024 --budget 0.05", bench("numpy"),
                            target=(2.0, 2.5)),
                    Command("workbench info", lambda: [sys.executable, "-m", "workbench", "info"])]
        if args.numba:
            commands.append(Command("workbench bench softmax numba 1024x1024 --budget 0.05", bench("numba")))
        for c in commands:  # warm-up round: page cache, .pyc files
            run_once(c.argv())
        for _ in range(args.runs):
            for c in commands:
                wall, peak = run_once(c.argv())
                c.walls.append(wall)
                c.peaks_mb.append(peak)

    base_wall, base_peak = statistics.median(baseline.walls), statistics.median(baseline.peaks_mb)
    print(f"median of {args.runs} interleaved runs, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}\n")
    header = ("command", "wall s", "peak MB", "wall ×", "peak ×", "target")
    rows = [header]
    failed = False
    for c in commands:
        wall, peak = statistics.median(c.walls), statistics.median(c.peaks_mb)
        rw, rp = wall / base_wall, peak / base_peak
        if c.target is None:
            verdict = "baseline" if c is baseline else "info"
        else:
            ok = rw <= c.target[0] and rp <= c.target[1]
            failed |= not ok
            verdict = f"{'PASS' if ok else 'FAIL'} (≤{c.target[0]:g}× wall, ≤{c.target[1]:g}× peak)"
        rows.append((c.label, f"{wall:.2f}", f"{peak:.0f}", f"{rw:.2f}", f"{rp:.2f}", verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""What process isolation costs: per cell, per call, per worker start, and on the quick suite's wall time.

    python tests/perf/isolation.py                 # per-cell and per-call figures (about a minute)
    python tests/perf/isolation.py --suite quick   # also the quick suite, in-process then in worker processes

Per cell: ``execute()``'s wall time minus the cell's own (``wall_s``, measured where the cell runs) is what
the executor adds: pickling the job and the row, the socket round trip, the parent's polling. Per call: the
same cell's median time measured in-process and in a worker, interleaved, so drift hits both alike (the
figures should not change: timing happens inside the worker). Worker start: spawning an interpreter and
importing the workbench and the backend's runtime, once per backend per run. Suite: the whole quick suite's
wall time in each mode, alternating the order between repetitions. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("WORKBENCH_AUTO_PEAKS", "0")

from workbench.measure.cell import Cell, CheckOnly  # noqa: E402
from workbench.measure.isolation import make_executor  # noqa: E402
from workbench.measure.timer import TimingConfig  # noqa: E402

CELLS = [("vector_add", "numpy", "numpy", {"n": 4096}), ("vector_add", "numba", "numba", {"n": 4096}),
         ("softmax", "numpy", "numpy", {"rows": 64, "cols": 1024})]
TIMING = TimingConfig(warmup_s=0.02, budget_s=0.1, min_samples=5, max_samples=200, target_spread=0.02, n_inputs=3)


def per_cell(reps: int) -> None:
    print("per-cell overhead (execute wall - the cell's own wall), median of", reps, "cells")
    for isolation in ("in-process", "process"):
        ex = make_executor(isolation)
        try:
            for kernel, variant, backend, params in CELLS:
                cell = Cell.make(kernel, variant, backend, "float32", params)
                ex.execute(cell, CheckOnly((0,)), timeout_s=60)  # warm: worker start, JIT, inputs
                extra = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    row = ex.execute(cell, CheckOnly((0,)), timeout_s=60)
                    extra.append(time.perf_counter() - t0 - row["wall_s"])
                print(f"  {isolation:<10} {kernel}/{variant} on {backend}: {statistics.median(extra) * 1e3:7.2f} ms "
                      f"(p90 {sorted(extra)[int(0.9 * len(extra))] * 1e3:.2f} ms)")
            starts = getattr(ex, "starts", [])
            if starts:
                print("  worker starts:", ", ".join(f"{b} {s:.2f} s" for b, s in starts))
        finally:
            ex.close()


def per_call(rounds: int) -> None:
    print("per-call time, the same cells measured in each mode, interleaved", rounds, "times")
    executors = {iso: make_executor(iso) for iso in ("in-process", "process")}
    try:
        for kernel, variant, backend, params in CELLS:
            cell = Cell.make(kernel, variant, backend, "float32", params)
            medians: dict[str, list[float]] = {iso: [] for iso in executors}
            for r in range(rounds):
                order = list(executors) if r % 2 == 0 else list(reversed(executors))
                for iso in order:
                    row = executors[iso].execute(cell, TIMING, timeout_s=60)
                    medians[iso].append(row["median_s"])
            a, b = (statistics.median(medians[i]) for i in ("in-process", "process"))
            print(f"  {kernel}/{variant} on {backend}: in-process {a * 1e6:8.2f} µs, worker {b * 1e6:8.2f} µs, "
                  f"ratio {b / a:.3f}")
    finally:
        for ex in executors.values():
            ex.close()


def suite(name: str, reps: int) -> None:
    """``workbench bench --suite NAME`` as a user runs it (a fresh process each time, so neither mode keeps
    another repetition's JIT caches), in-process and with worker processes, alternating the order."""
    import subprocess

    walls: dict[str, list[float]] = {"in-process": [], "process": []}
    # as `make demo` runs it: `workbench info` first, whose cached probe a sweep with workers plans from
    subprocess.run([sys.executable, "-m", "workbench", "info"], capture_output=True, text=True, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(reps):
            for iso in (("in-process", "process") if r % 2 == 0 else ("process", "in-process")):
                cmd = [sys.executable, "-m", "workbench", "bench", "--suite", name, "--quiet", "--isolation", iso,
                       "--store", str(Path(tmp) / f"{iso}-{r}.sqlite")]
                t0 = time.perf_counter()
                done = subprocess.run(cmd, capture_output=True, text=True)
                wall = time.perf_counter() - t0
                if done.returncode != 0:
                    raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
                walls[iso].append(wall)
                print(f"  {name} suite, {iso}: {wall:.1f} s wall (process start to exit)", flush=True)
    a, b = (statistics.median(walls[i]) for i in ("in-process", "process"))
    print(f"{name} suite wall, median of {reps}: in-process {a:.1f} s, worker processes {b:.1f} s: "
          f"{100 * (b / a - 1):+.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30, help="cells per per-cell figure")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved measurements per per-call figure")
    ap.add_argument("--suite", default=None, help="also time this suite in both modes (e.g. quick)")
    ap.add_argument("--suite-reps", type=int, default=1)
    args = ap.parse_args()
    per_cell(args.reps)
    per_call(args.rounds)
    if args.suite:
        suite(args.suite, args.suite_reps)


if __name__ == "__main__":
    main()

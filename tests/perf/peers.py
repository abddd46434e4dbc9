"""Does ``workbench.timeit`` agree with its peers? (A benchmark that prints, not a test.)

For three callables of about 1 µs, 200 µs and 2 ms (numpy, single-threaded work: sizes calibrated on this
machine at start) the same run measures each with

- ``workbench.timeit(fn)`` (its defaults),
- ``torch.utils.benchmark.Timer(...).adaptive_autorange()`` (its defaults: threshold 0.1, min 0.01 s),
- the standard library's ``timeit``: ``autorange()`` for the number of calls, then ``repeat(5, number)``,
  the median of the five per-call times,
- ``timeit`` again in blocks of ~100 µs (median of 200): on a busy machine the time of the callable itself,
  which blocks of milliseconds (torch) or 0.2 s (autorange) no longer show (see the end of this note),

``--repeats`` times, the three tools in a shuffled order per repeat so drift of the machine falls on all of
them alike. Printed per callable: each tool's median (median over repeats), the workbench's difference
from the two others in %, and each tool's time to result (median wall time of one measurement, set-up
included). Targets (issue 16): medians within ±3%, time to result at most 2x torch's.

Usage: ``.venv/bin/python tests/perf/peers.py [--repeats 7] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
import timeit as std_timeit
from collections.abc import Callable
from typing import Any

import numpy as np

#: Target duration of each callable, seconds.
TARGETS = {"~1 µs": 1e-6, "~200 µs": 200e-6, "~2 ms": 2e-3}


def make_callable(target_s: float) -> tuple[Callable[[], Any], str]:
    """A numpy call of about ``target_s``: a small add for 1 µs, exp over n float64 elements otherwise
    (n calibrated here). Both single-threaded, so the machine's other core does not enter."""
    if target_s < 5e-6:
        a, b = np.ones(16), np.ones(16)
        return (lambda: np.add(a, b)), "np.add of 16 float64"
    n = 1 << 10
    while True:
        x = np.random.rand(n)
        t = min(std_timeit.repeat(lambda x=x: np.exp(x), number=3, repeat=3)) / 3
        if t >= target_s or n > 1 << 26:
            break
        n = int(n * max(1.2, min(8.0, target_s / max(t, 1e-9))))
    n = max(1, int(n * target_s / t))
    x = np.random.rand(n)
    return (lambda: np.exp(x)), f"np.exp of {n:,} float64"


def with_workbench(fn: Callable[[], Any]) -> tuple[float, float, bool]:
    import workbench

    t0 = time.perf_counter()
    m = workbench.timeit(fn)
    return m.median_s, time.perf_counter() - t0, m.noisy


def with_torch(fn: Callable[[], Any]) -> tuple[float, float, bool]:
    from torch.utils import benchmark

    t0 = time.perf_counter()
    m = benchmark.Timer(stmt="fn()", globals={"fn": fn}).adaptive_autorange()
    return m.median, time.perf_counter() - t0, False


def with_timeit(fn: Callable[[], Any]) -> tuple[float, float, bool]:
    t0 = time.perf_counter()
    timer = std_timeit.Timer(fn)
    number, _ = timer.autorange()
    runs = timer.repeat(repeat=5, number=number)
    return statistics.median(r / number for r in runs), time.perf_counter() - t0, False


def with_short_blocks(fn: Callable[[], Any]) -> tuple[float, float, bool]:
    """stdlib timeit in blocks of about 100 µs (200 of them), the median block: a block that short is
    rarely preempted, so on a busy machine this is the callable's own time rather than its share of a
    contended CPU (the tools above time blocks of milliseconds to a second)."""
    t0 = time.perf_counter()
    timer = std_timeit.Timer(fn)
    per = min(timer.repeat(repeat=5, number=1))
    number = max(1, int(100e-6 / max(per, 1e-9)))
    runs = timer.repeat(repeat=200, number=number)
    return statistics.median(r / number for r in runs), time.perf_counter() - t0, False


TOOLS = {"workbench.timeit": with_workbench, "torch adaptive_autorange": with_torch, "stdlib timeit": with_timeit,
         "timeit, 100 µs blocks": with_short_blocks}


def fmt(s: float) -> str:
    from workbench.adhoc.timing import fmt_seconds

    return fmt_seconds(s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    import torch  # noqa: F401 - imported before any timing, so no tool pays for it

    import workbench

    workbench.timeit(lambda: None)  # first-use costs (backend lookup, imports) are paid once, before timing
    rng = random.Random(args.seed)
    report: dict[str, Any] = {"load_avg_start": os.getloadavg(), "cpus": os.cpu_count()}
    print(f"load average {report['load_avg_start'][0]:.2f} on {report['cpus']} CPUs at the start")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for label, target in TARGETS.items():
        fn, what = make_callable(target)
        got: dict[str, list[tuple[float, float, bool]]] = {t: [] for t in TOOLS}
        for _ in range(args.repeats):
            order = list(TOOLS)
            rng.shuffle(order)
            for tool in order:
                got[tool].append(TOOLS[tool](fn))
        med = {t: statistics.median(m for m, _, _ in v) for t, v in got.items()}
        wall = {t: statistics.median(w for _, w, _ in v) for t, v in got.items()}
        wb = med["workbench.timeit"]
        report[label] = {"callable": what, "median_s": med, "time_to_result_s": wall,
                         "diff_vs_torch_pct": 100 * (wb / med["torch adaptive_autorange"] - 1),
                         "diff_vs_timeit_pct": 100 * (wb / med["stdlib timeit"] - 1),
                         "diff_vs_short_blocks_pct": 100 * (wb / med["timeit, 100 µs blocks"] - 1),
                         "ttr_ratio_vs_torch": wall["workbench.timeit"] / wall["torch adaptive_autorange"],
                         "workbench_noisy": sum(n for _, _, n in got["workbench.timeit"]),
                         "per_repeat_s": {t: [m for m, _, _ in v] for t, v in got.items()}}
        r = report[label]
        print(f"\n{label}: {what}  ({args.repeats} repeats, tools in shuffled order)")
        print(f"  {'tool':26s} {'median':>10s} {'time to result':>15s}")
        for t in TOOLS:
            print(f"  {t:26s} {fmt(med[t]):>10s} {fmt(wall[t]):>15s}")
        print(f"  workbench vs torch: {r['diff_vs_torch_pct']:+.1f}%   vs timeit: {r['diff_vs_timeit_pct']:+.1f}%   "
              f"vs 100 µs blocks: {r['diff_vs_short_blocks_pct']:+.1f}%   "
              f"time to result {r['ttr_ratio_vs_torch']:.2f}x torch's   "
              f"(workbench flagged noisy in {r['workbench_noisy']} of {args.repeats})")
    report["load_avg_end"] = os.getloadavg()
    report["cpu_share"] = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    print(f"\nload average {report['load_avg_end'][0]:.2f} at the end; this process got "
          f"{100 * report['cpu_share']:.0f}% of a CPU while it ran (CPU time / wall time)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()

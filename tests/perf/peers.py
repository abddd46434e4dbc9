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

"CPU share" is the measuring thread's CPU time over the wall time of the measurement: below 100% the
machine's other processes held the CPU for part of it. A tool whose timed blocks last milliseconds (torch's
``adaptive_autorange`` batches calls until the timer's overhead is 1e-4 of a block; ``autorange`` until a
block lasts 0.2 s) then counts their time slices in its median; samples of ~100 µs (the workbench's
``min_sample_s``, and the 100 µs-block column) are rarely cut. On an idle machine all four agree.

Usage: ``.venv/bin/python tests/perf/peers.py [--repeats 7] [--json OUT]``

Measured 2026-11-22 on the 2-core machine while four other sessions' jobs ran (load average 2.4-5.8; this
process got 50-84% of a CPU), ``--repeats 7``, workbench's median against each peer's:

    callable            vs torch    vs timeit   vs 100 µs blocks   time to result / torch's
    np.add 16 (~300 ns)  +0.4% +1.9%  -30% -6%    +2.6% +1.4%        0.97x 1.16x
    np.exp (~190 µs)    -36.5% -36.6% -53% -36%   +1.2% +1.4%        0.15x 0.07x
    np.exp (~0.9 ms)    -47.3% -42.7% -45% -47%   +1.7% +0.4%        0.01x 0.77x

(two runs each). The ±3% target held against torch at 1 µs and against the 100 µs blocks everywhere; at
200 µs and 1 ms torch and ``timeit`` read 1.6-2x higher, by about 1 / (CPU share): their blocks of 3 ms
(torch: 10 calls) to 0.2 s included the other processes' time slices. Not measured here: an idle machine
(FIELD-NOTES.md recorded 3-5% between the workbench timer and ``adaptive_autorange`` on one).
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
        share: dict[str, list[float]] = {t: [] for t in TOOLS}  # CPU time / wall time while each tool ran
        for _ in range(args.repeats):
            order = list(TOOLS)
            rng.shuffle(order)
            for tool in order:
                c0, w0 = time.thread_time(), time.perf_counter()
                got[tool].append(TOOLS[tool](fn))
                share[tool].append((time.thread_time() - c0) / (time.perf_counter() - w0))
        med = {t: statistics.median(m for m, _, _ in v) for t, v in got.items()}
        wall = {t: statistics.median(w for _, w, _ in v) for t, v in got.items()}
        cpu = {t: statistics.median(v) for t, v in share.items()}
        wb = med["workbench.timeit"]
        report[label] = {"callable": what, "median_s": med, "time_to_result_s": wall, "cpu_share": cpu,
                         "diff_vs_torch_pct": 100 * (wb / med["torch adaptive_autorange"] - 1),
                         "diff_vs_timeit_pct": 100 * (wb / med["stdlib timeit"] - 1),
                         "diff_vs_short_blocks_pct": 100 * (wb / med["timeit, 100 µs blocks"] - 1),
                         "ttr_ratio_vs_torch": wall["workbench.timeit"] / wall["torch adaptive_autorange"],
                         "workbench_noisy": sum(n for _, _, n in got["workbench.timeit"]),
                         "per_repeat_s": {t: [m for m, _, _ in v] for t, v in got.items()}}
        r = report[label]
        print(f"\n{label}: {what}  ({args.repeats} repeats, tools in shuffled order)")
        print(f"  {'tool':26s} {'median':>10s} {'time to result':>15s} {'CPU share':>10s}")
        for t in TOOLS:
            print(f"  {t:26s} {fmt(med[t]):>10s} {fmt(wall[t]):>15s} {100 * cpu[t]:>9.0f}%")
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

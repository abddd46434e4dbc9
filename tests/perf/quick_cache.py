"""CPU time the numba disk cache saves on the quick suite — a benchmark script, not a test.

    .venv/bin/python tests/perf/quick_cache.py [--pairs 1] [--suite quick]

Runs ``workbench bench --suite quick`` twice per pair, each as a fresh child process with a fresh
store: first with empty caches — numba's (``NUMBA_CACHE_DIR``), PoCL's (``POCL_CACHE_DIR``) and
pyopencl's (under ``XDG_CACHE_HOME``), as on a fresh machine, so every kernel compiles and writes its
cache — then again with those caches filled (kernels load instead of compiling). The automatic
ceilings probe is turned off in both runs, so only kernel caches differ. CPU
time is the child's user + system time from ``os.wait4``, which load from other processes barely
moves (unlike wall time). The target of issue 8: the second run spends at least 25 s less CPU than
the first. Exit status 1 when it does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET_S = 25.0


def run_bench(suite: str, cache_dir: Path, store: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``workbench bench`` child."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir / "numba"), "POCL_CACHE_DIR": str(cache_dir / "pocl"),
           "XDG_CACHE_HOME": str(cache_dir / "xdg"), "PYTHONPATH": str(REPO),
           # the automatic ceilings probe is cached too, but it is not a kernel cache: off in both runs
           "WORKBENCH_AUTO_PEAKS": "0"}
    argv = [sys.executable, "-m", "workbench", "bench", "--suite", suite, "--store", str(store), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1, help="cold/warm pairs (median of the savings)")
    ap.add_argument("--suite", default="quick")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            cache = Path(tmp) / f"caches-{i}"
            for sub in ("numba", "pocl", "xdg"):
                (cache / sub).mkdir(parents=True)
            cold = run_bench(args.suite, cache, Path(tmp) / f"cold-{i}.sqlite")
            warm = run_bench(args.suite, cache, Path(tmp) / f"warm-{i}.sqlite")
            rows.append((cold, warm))
            print(f"pair {i + 1}: empty cache {cold[1]:6.1f} s CPU ({cold[0]:5.1f} s wall); "
                  f"filled cache {warm[1]:6.1f} s CPU ({warm[0]:5.1f} s wall); saved {cold[1] - warm[1]:5.1f} s CPU")
    saved = statistics.median(c[1] - w[1] for c, w in rows)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    verdict = "PASS" if saved >= TARGET_S else "FAIL"
    print(f"median CPU saved by the warm caches: {saved:.1f} s (target >= {TARGET_S:g} s): {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

"""Issue 22's roof targets on the quick suite — a benchmark script, not a test.

    .venv/bin/python tests/perf/roofs_quick.py [--store S.sqlite] [--run RUN_ID] [--keep DIR]

Without ``--store`` it runs ``workbench bench --suite quick`` (default settings, every backend available) into
a temporary store first (several minutes on a loaded 2-core machine). Then it reads the rows as the report
reads them (:func:`workbench.report.roof_check.check_roofs`) and prints, against the targets:

- rows above 100% of their roof without the implausible mark (target 0);
- rows that name no roof (target 0: a row without one says which roof is missing and why);
- physical devices with more than one roof set (target 0: every runtime on the CPU shares its roofs);
- each offending row, the rows marked implausible, and each device's roof set.

Exit status 1 when a target is missed. ``uptime`` is printed before and after: timings are taken under
whatever load the machine has.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="an existing store to check (default: run the quick suite into a new one)")
    ap.add_argument("--run", help="the run id to check (default: the store's latest run)")
    ap.add_argument("--keep", help="folder for the store the script runs (default: a temporary one)")
    args = ap.parse_args(argv)

    from workbench.report.data import gather
    from workbench.report.roof_check import check_roofs
    from workbench.store.database import open_store

    print("uptime before:", _uptime())
    store_path = args.store
    if store_path is None:
        folder = Path(args.keep or tempfile.mkdtemp(prefix="wb-roofs-"))
        folder.mkdir(parents=True, exist_ok=True)
        store_path = str(folder / "quick.sqlite")
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "workbench", "bench", "--suite", "quick", "--store", store_path,
                        "--quiet"], check=True, cwd=REPO)
        print(f"quick suite: {time.monotonic() - t0:.0f} s wall; uptime after: {_uptime()}")
    store = open_store(store_path)
    run_id = args.run or store.runs()["run_id"].iloc[-1]
    data = gather(store, [run_id])
    result = check_roofs(data.df, data.peaks, data.environments)
    print(f"store {store_path}, run {run_id}")
    for line in result.lines():
        print(line)
    print("targets:", "met" if result.passed else "MISSED")
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())

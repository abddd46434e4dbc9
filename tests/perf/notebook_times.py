"""How long each tutorial takes to execute as shipped (no parameter injected), one notebook at a time.

Target (issue 25): every tutorial executes in at most 2 minutes on the 2-core machine, without a switch.
Prints one line per notebook: wall seconds, the 1-minute load average before and after, the reference
``python -c "import pandas, matplotlib.pyplot"`` timed just before it (median of 3) and the notebook's time as a
multiple of it, and whether any cell raised. The load average and the reference are printed beside each figure
because the machine is shared: a figure measured with a busy core is not comparable with one measured idle,
while the ratio to a reference taken minutes apart in the same run is.

    .venv/bin/python tests/perf/notebook_times.py [notebooks/04_*.ipynb ...]   # default: every tutorial
    .venv/bin/python tests/perf/notebook_times.py --keep /tmp/nb   # also write each executed notebook there
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbclient
import nbformat

REPO = Path(__file__).resolve().parents[2]
TARGET_S = 120.0
REFERENCE = [sys.executable, "-c", "import pandas, matplotlib.pyplot"]


def reference_seconds(repeats: int = 3) -> float:
    """Median wall seconds of the reference import, the yardstick for the machine's load right now."""
    times = []
    for _ in range(repeats):
        t0 = time.monotonic()
        subprocess.run(REFERENCE, check=True, env={**os.environ, "MPLBACKEND": "agg"})
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def cell_seconds(cell: nbformat.NotebookNode) -> float:
    """How long one executed cell ran (nbclient's timing metadata)."""
    t = cell.get("metadata", {}).get("execution", {})
    start, end = t.get("iopub.execute_input"), t.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (datetime.fromisoformat(end.replace("Z", "+00:00"))
            - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def execute(path: Path, timeout_s: int, keep: Path | None = None) -> tuple[float, list[str], list[tuple[int, float]]]:
    """Wall seconds to execute ``path`` in a fresh folder, the errors its cells raised, and its slowest cells;
    the executed notebook is written into ``keep`` when given (to read its text against its outputs)."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix=f"nbtime-{path.stem}-") as work:
        client = nbclient.NotebookClient(nb, timeout=timeout_s, kernel_name="python3", allow_errors=True,
                                         resources={"metadata": {"path": work}})
        env = {**os.environ, "WORKBENCH_STORE": str(Path(work) / "workbench-results.sqlite"),
               "MPLBACKEND": "module://matplotlib_inline.backend_inline", "MPLCONFIGDIR": str(Path(work) / "mpl")}
        t0 = time.monotonic()
        client.execute(env=env)
        seconds = time.monotonic() - t0
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, keep / path.name)
    errors = [f"cell {i}: {o.ename}: {o.evalue}" for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    slowest = sorted(((i, cell_seconds(c)) for i, c in enumerate(nb.cells) if c.cell_type == "code"),
                     key=lambda ic: -ic[1])[:3]
    return seconds, errors, slowest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/[0-9]*.ipynb")
    parser.add_argument("--cell-timeout", type=int, default=1200, help="seconds one cell may take")
    parser.add_argument("--keep", type=Path, help="folder to write the executed notebooks into")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((REPO / "notebooks").glob("[0-9]*.ipynb"))
    print(f"{'notebook':40s} {'seconds':>8s} {'load before':>11s} {'load after':>10s} {'ref s':>6s} {'x ref':>6s}"
          "  verdict", flush=True)
    over = 0
    for path in paths:
        ref = reference_seconds()
        load0 = os.getloadavg()[0]
        seconds, errors, slowest = execute(path, args.cell_timeout, args.keep)
        load1 = os.getloadavg()[0]
        verdict = "errors: " + "; ".join(errors) if errors else ("ok" if seconds <= TARGET_S else "over 2 min")
        over += seconds > TARGET_S or bool(errors)
        cells = ", ".join(f"cell {i} {t:.0f} s" for i, t in slowest)
        print(f"{path.name:40s} {seconds:8.1f} {load0:11.2f} {load1:10.2f} {ref:6.2f} {seconds / ref:6.0f}"
              f"  {verdict} (slowest: {cells})", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

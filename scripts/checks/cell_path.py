"""The way of one cell: which workbench modules `workbench bench` passes from its entry to the timer.

Runs ``workbench bench`` on one small numpy cell in this process (``--isolation in-process``, one round) under
a profiler, from ``cli.cmd_bench.run`` until the first sample is timed (``measure.timer.time_calls``), and
prints two figures:

- **the way**: the call stack at the moment the timer is entered: the sweep's thread from the command down to
  where it waits for the cell, then the cell's thread from its start down to the timer (workbench frames
  only). Each module should appear once (one contiguous stretch), and few modules in all;
- **every call**: each call into a ``workbench.`` module on the way there (other packages, and everything
  that runs while the catalog's folders load, left out), a run of calls inside one module counted as one stop: how often the flow climbs back
  into a module it already left.

``python scripts/checks/cell_path.py``; ``--stops`` also lists every stop of the second figure.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

ENTRY = ("workbench.cli.cmd_bench", "run")
TIMER = ("workbench.measure.timer", "time_calls")


def _stack(frame) -> list[str]:  # noqa: ANN001 - a frame
    """The workbench modules of ``frame`` and its callers, outermost first."""
    mods = []
    while frame is not None:
        mod = frame.f_globals.get("__name__", "")
        if mod.startswith("workbench."):
            mods.append(mod)
        frame = frame.f_back
    return mods[::-1]


def trace_bench() -> tuple[list[str], list[str]]:
    """(the stack at the timer: the sweep's thread, then the cell's; every workbench call until then)."""
    from workbench.cli import main

    seen: list[str] = []
    way: list[str] = []
    main_id = threading.main_thread().ident
    state = {"on": False, "done": False}

    def profile(frame, event, arg):  # noqa: ANN001 - the profiler's signature
        if event != "call" or state["done"]:
            return
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("workbench.") and mod != "workbench":
            return
        name = frame.f_code.co_name
        if (mod, name) == ENTRY:
            state["on"] = True
        if not state["on"]:
            return
        if "workbench.catalog.loader" not in _stack(frame):  # loading the catalog's folders is not the cell's way
            seen.append(mod)
        if (mod, name) == TIMER:
            state["done"] = True
            here = _stack(frame)
            if threading.get_ident() != main_id:  # the cell runs on a worker thread: the sweep waits on main
                way.extend(_stack(sys._current_frames()[main_id]))
            way.extend(here)

    with tempfile.TemporaryDirectory() as tmp:
        argv = ["bench", "--kernels", "saxpy", "--variants", "numpy", "--backends", "numpy", "--sizes", "4096",
                "--rounds", "1", "--budget", "0.02", "--isolation", "in-process", "--quiet",
                "--store", str(Path(tmp) / "r.sqlite")]
        sys.setprofile(profile)
        threading.setprofile(profile)
        try:
            main(argv)
        except SystemExit:
            pass
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    if not state["done"]:
        raise SystemExit("the timer was never reached: the bench command failed or the timer moved")
    return way, seen


def stops(calls: list[str]) -> list[str]:
    """Consecutive calls inside one module are one stop."""
    return [m for i, m in enumerate(calls) if i == 0 or calls[i - 1] != m]


def main() -> None:
    stack, calls = trace_bench()
    stack = stops(stack)
    counts = Counter(stack)
    print(f"the way (stack at the timer): {len(stack)} stretches in {len(counts)} modules, "
          f"{sum(n - 1 for n in counts.values())} entered again")
    print("  " + " > ".join(m.removeprefix("workbench.") for m in stack))
    way = stops(calls)
    entries = Counter(way)
    short = [m.removeprefix("workbench.") for m in way]
    print(f"every call: {len(way)} stops in {len(entries)} modules from cli.cmd_bench.run to "
          "measure.timer.time_calls")
    again = {m.removeprefix('workbench.'): n for m, n in entries.most_common() if n > 1}
    print(f"modules entered more than once: {len(again)}; re-entries: {sum(n - 1 for n in entries.values())}")
    for m, n in again.items():
        print(f"  {m}: {n}")
    print("modules, first entry order:", " > ".join(dict.fromkeys(short)))
    if "--stops" in sys.argv:
        print("\n".join(short))


if __name__ == "__main__":
    main()

"""How many workbench modules a cell passes through, from ``workbench bench`` to the worker and back.

Runs ``workbench bench ARGS`` in this process under ``sys.setprofile`` / ``threading.setprofile`` (so the
in-process worker thread is followed too) and records every call into a ``workbench.*`` module: the
distinct modules visited and the transitions (a call whose module differs from its caller's workbench
module). Run it twice on the same store: the first run measures the backend's ceilings (a probe of many
cells), the second shows one cell's path alone.

    python scripts/cell_path.py --store /tmp/p.sqlite --kernels vector_add --backends numpy --sizes 1000 \\
        --budget 0.05 --isolation in-process
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections import Counter
from typing import Any


def main(argv: list[str]) -> int:
    from workbench.cli import main as cli_main

    modules: Counter[str] = Counter()
    transitions: Counter[tuple[str, str]] = Counter()
    path: list[str] = []

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or not frame.f_code.co_flags & inspect.CO_NEWLOCALS:  # module and class bodies run
            return  # at import: not the cell's path
        mod = frame.f_globals.get("__name__", "")
        if mod.startswith(KERNEL_PREFIX) and not path:  # the kernel's first timed call: the stacks that led here
            stack = _stack_path(frame)
            if TIMER in stack:
                path.extend(stack)
        if not _ours(mod):
            return
        modules[mod] += 1
        caller = frame.f_back
        while caller is not None and not _ours(caller.f_globals.get("__name__", "")):
            caller = caller.f_back
        if caller is not None and caller.f_globals["__name__"] != mod:
            transitions[(caller.f_globals["__name__"], mod)] += 1

    threading.setprofile(prof)
    sys.setprofile(prof)
    try:
        rc = cli_main(["bench", *argv])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    mods = sorted(m for m in modules if m != "workbench.cli" and not m.startswith("workbench.cli."))
    print(f"\nexit {rc}: {len(modules)} workbench modules called ({len(mods)} outside workbench.cli), "
          f"{len(transitions)} distinct module transitions, {sum(transitions.values())} cross-module calls")
    print("modules called: " + " ".join(sorted(modules)))
    stops = [m for i, m in enumerate(path) if i == 0 or path[i - 1] != m]
    print(f"the kernel's first timed call: {len(set(path))} distinct workbench modules on the stack(s) from the CLI to "
          f"the kernel, {len(stops)} stops (module changes + 1):")
    print("  " + " -> ".join(stops))
    return 0


#: Modules of the built-in catalog's kernels (loaded by path).
KERNEL_PREFIX = "workbench_catalog."
#: The timing loop: the kernel's first call under it is the cell's deepest point.
TIMER = "workbench.measure.timer"


def _ours(mod: str) -> bool:
    return mod == "workbench" or mod.startswith("workbench.")


def _stack_path(frame: Any) -> list[str]:
    """Workbench modules on the main thread's stack, then on this thread's (outermost first), when the
    kernel runs on a worker thread; else this thread's."""
    def chain(f: Any) -> list[str]:
        out = []
        while f is not None:
            if _ours(f.f_globals.get("__name__", "")):
                out.append(f.f_globals["__name__"])
            f = f.f_back
        return out[::-1]

    here = chain(frame)
    main_id = threading.main_thread().ident
    if threading.get_ident() == main_id:
        return here
    return chain(sys._current_frames().get(main_id)) + here


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

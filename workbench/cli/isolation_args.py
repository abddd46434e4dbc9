"""The options ``bench`` and ``verify`` share about where cells run (:mod:`workbench.measure.isolation`)."""

from __future__ import annotations

import argparse

from workbench.cli.checks import check_memory_cap
from workbench.measure.isolation import ISOLATIONS, check_isolation
from workbench.measure.memory_cap import parse_memory_cap


def add(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("isolation", "where cells run; by default each backend's cells run in a worker "
                                          "process of their own, so a kernel that crashes, hangs or grows "
                                          "memory ends as a crashed / timeout / oom row and the run goes on")
    g.add_argument("--isolation", choices=ISOLATIONS, default=None,
                   help="process (default; $WORKBENCH_ISOLATION overrides it) or in-process")
    g.add_argument("--in-process", dest="isolation", action="store_const", const="in-process",
                   help="run cells in this process, for debugging (a debugger and prints reach the kernel; "
                        "a crashing kernel takes the whole run down, a hung call can only be abandoned)")
    g.add_argument("--memory-cap", metavar="SIZE", default=None,
                   help="memory one cell may add to its worker process, e.g. 8G, 512M, 40%% (of host memory) "
                        "or none; past it the cell ends as oom (default: half the host's memory)")


def options(args: argparse.Namespace) -> dict[str, str | None]:
    """``isolation`` and ``memory_cap`` as given (None where not), unchecked: ``bench`` checks them once with
    the rest of its request (:meth:`workbench.sweep.request.SweepRequest.checked`), ``verify`` with
    :func:`check`."""
    return {"isolation": args.isolation, "memory_cap": args.memory_cap}


def check(args: argparse.Namespace) -> None:
    """Refuse a bad ``--isolation`` or ``--memory-cap`` before anything runs."""
    check_isolation(args.isolation)
    parse_memory_cap(args.memory_cap)
    check_memory_cap(args.memory_cap)  # "0.5" (half a byte) and "200%" are refused, not obeyed

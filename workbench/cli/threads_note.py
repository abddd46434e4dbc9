"""The note a command prints when a kernel left a thread running as it ends (see
:mod:`workbench.core.threads_left`): which variant started it, and that the command exits without it."""

from __future__ import annotations

import sys

from workbench.core.threads_left import ThreadLeft


def _started_by(thread: ThreadLeft) -> str:
    if thread.origin is None:
        return "started before workbench recorded where threads start"
    from workbench.catalog.registry import variant_at

    variant = variant_at(thread.origin.file, thread.origin.function)
    where = f"started at {thread.origin}"
    return f"started by variant {variant} ({where})" if variant else where


def say_threads_left(threads: list[ThreadLeft]) -> None:
    """One stderr line per thread still running; the command's work is done and stored."""
    for thread in threads:
        print(f"workbench: note: thread {thread.name!r} {_started_by(thread)} is still running; the command's "
              "work is done, so it exits without waiting for that thread", file=sys.stderr)

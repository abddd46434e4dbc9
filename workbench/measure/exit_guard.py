"""In-process cells may not end the process: ``os._exit`` from a kernel is refused while its cell runs.

A worker process that a kernel ends becomes a ``crashed`` row; in this process (``--in-process``, the notebook)
``os._exit(0)`` from a variant ended ``workbench bench`` at once with exit status 0, no output and its run left
"interrupted" (2026-12-07): a CI gate passed on nothing. ``sys.exit`` raises ``SystemExit``, which a cell already
records as an error; ``os._exit`` skips every handler, so it is swapped for one that raises while a cell runs
here. A kernel that kills its process by a signal still does (that exit status is not 0).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import NoReturn


class ProcessExitRefused(RuntimeError):
    """A kernel called ``os._exit`` while its cell ran in this process."""


_lock = threading.Lock()
_depth = 0
_real_exit = os._exit


def _refused(status: int) -> NoReturn:
    if threading.current_thread() is threading.main_thread():  # ours (a signal handler's exit): cells run on
        _real_exit(status)  # the cell thread
    raise ProcessExitRefused(f"the kernel called os._exit({status}), which would end this process with it (cells "
                             "run in-process here); use process isolation to see what it does to a process")


@contextlib.contextmanager
def process_exit_refused() -> Iterator[None]:
    """``os._exit`` raises :class:`ProcessExitRefused` instead of ending the process, for as long as this lasts
    (nested and thread-safe: the real one is back when the last user leaves)."""
    global _depth
    with _lock:
        if _depth == 0:
            os._exit = _refused
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                os._exit = _real_exit

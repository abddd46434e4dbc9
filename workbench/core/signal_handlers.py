"""Handlers of some signals replaced for a while, then put back: the one shape the command's SIGTERM/SIGHUP
handling (:mod:`workbench.cli.termination`) and the catalog's import guard (:mod:`workbench.catalog.import_guard`)
both need."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: What ``signal.getsignal`` gives: a handler, SIG_DFL, SIG_IGN, or None (one installed from C).
Handler = Any


@contextlib.contextmanager
def handlers_replaced(signals: Iterable[int], handler: Callable[..., Any],
                      replace: Callable[[Handler], bool]) -> Iterator[None]:
    """Within, ``handler`` handles each of ``signals`` whose current handler ``replace`` accepts; the handlers
    it replaced are back after. Off the main thread (where Python cannot set handlers) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in signals:
        if replace(signal.getsignal(signum)):
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)

"""What a catalog file may not do to the command that imports it, beyond raising (which the loader catches).

Why each guard: a ``spec.py`` calling ``os._exit(0)`` ended ``verify`` and ``bench`` with exit 0 and no output
(a CI gate passed on nothing, as ``sys.exit(0)`` once did); one that closed ``sys.stdout`` made the command fail
with "I/O operation on closed file", naming nothing; one that set SIGALRM to be ignored (or cancelled the
timer) and then looped hung every command, the import bound notwithstanding; and a Ctrl-C or SIGTERM that
arrived while a slow file was importing was taken for that file's failure, so the command went on.

Within :func:`guarded_import`, on the importing thread: ``os._exit`` raises :class:`CatalogExit` (other
threads still exit), ``sys.stdout``/``sys.stderr`` cannot be closed or replaced for good (and what the file
prints goes to stderr, never into the command's output), nor the working directory (a ``chdir`` at import moved
``--store rel.sqlite``), umask or recursion limit changed, a watchdog thread
ends a pure-Python loop that outlives the bound even when the file disarmed the alarm, and a signal that
stops commands (SIGINT, SIGTERM, SIGHUP, where not ignored) is delivered again after the import, to the
handler that was there before, instead of being caught as the file's error.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import posix
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from workbench.core.process_state import process_state_kept
from workbench.core.signal_handlers import handlers_replaced

#: Signals that stop a command: never swallowed as a catalog file's failure.
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
#: Seconds past the import bound after which the watchdog thread ends the import (the alarm goes first).
WATCHDOG_GRACE_S = 1.0


class CatalogExit(BaseException):
    """Raised instead of ending the process when a catalog file calls ``os._exit`` while it is imported."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


class CatalogWatchdogTimeout(BaseException):
    """Raised by the watchdog inside an import that outlived its bound with the alarm disarmed."""


class SignalWhileImporting(BaseException):
    """A stop signal arrived during the import: re-delivered once the import is over."""


@contextlib.contextmanager
def _no_exit() -> Iterator[None]:
    """``os._exit`` on this thread raises :class:`CatalogExit`; other threads keep the real one."""
    real, me = os._exit, threading.get_ident()

    def refuse(code: int) -> None:
        if threading.get_ident() != me:
            real(code)
        raise CatalogExit(code)

    os._exit = posix._exit = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = posix._exit = real  # type: ignore[assignment]


@contextlib.contextmanager
def _watchdog(limit_s: float) -> Iterator[None]:
    """After ``limit_s`` + :data:`WATCHDOG_GRACE_S`, raise :class:`CatalogWatchdogTimeout` in this thread (a
    pure-Python loop is stopped at its next bytecode whatever the file did to SIGALRM)."""
    target, done, lock = threading.get_ident(), threading.Event(), threading.Lock()
    fired = []

    def watch() -> None:
        if done.wait(limit_s + WATCHDOG_GRACE_S):
            return
        with lock:
            if not done.is_set():
                fired.append(ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(CatalogWatchdogTimeout)))

    thread = threading.Thread(target=watch, name="catalog-import-watchdog", daemon=True)
    thread.start()
    try:
        yield
    finally:
        with lock:
            done.set()
            if fired:  # not delivered yet (the import ended first): cancel it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)


@contextlib.contextmanager
def _stop_signals_kept() -> Iterator[None]:
    """A stop signal during the import raises :class:`SignalWhileImporting` there, and is raised again after,
    under the handler that was there before (Ctrl-C then ends the command as anywhere else)."""
    arrived: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)
        raise SignalWhileImporting(signum)

    try:
        with handlers_replaced(STOP_SIGNALS, note, lambda handler: handler not in (signal.SIG_IGN, None)):
            yield
    finally:
        if arrived:
            signal.raise_signal(arrived[0])


@contextlib.contextmanager
def guarded_import(limit_s: float, what: str = "a catalog file") -> Iterator[None]:
    """Every guard of this module around one catalog file's import (see the module's docstring); the streams,
    working directory, umask and recursion limit are kept by :func:`~workbench.core.process_state.process_state_kept`
    (what the file prints goes to stderr)."""
    with _stop_signals_kept(), _no_exit(), process_state_kept(what, stdout_to_stderr=True), \
            _children_ended_at_exit(), _watchdog(limit_s):
        yield


#: Processes catalog files started while they were imported, ended when this process exits.
_started: list[Any] = []


@contextlib.contextmanager
def _children_ended_at_exit() -> Iterator[None]:
    """Children of this process that appear during the import are ended at exit: a ``spec.py`` that started
    ``sleep`` at its top left it running after ``verify`` exited (workers end theirs; this process did not)."""
    import psutil

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    try:
        yield
    finally:
        new = [p for p in me.children(recursive=True) if p.pid not in before]
        if new and not _started:
            atexit.register(_end_started)
        _started.extend(new)


def _end_started() -> None:
    import psutil

    alive = [p for p in _started if p.is_running()]
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=2)


def stop_signal(exc: BaseException) -> bool:
    """``exc`` is a stop signal met during the import: it must end the command, not the file's load."""
    return isinstance(exc, SignalWhileImporting)

"""A process of ours exits when its work is done, whatever threads a kernel left running.

Why: a variant that starts a non-daemon ``threading.Thread`` (one that never ends, or sleeps for long) kept
``bench --in-process`` from exiting after its rows were stored (the interpreter joins such threads before it
exits), and kept each worker process alive until its parent killed it after a wait. The command records
where each thread was started (:func:`recording_origins`), lists the ones still alive when it is done
(:func:`threads_left`), says so, and exits without joining them (:func:`exit_now`); a worker exits with
:func:`exit_now` after its last message.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NoReturn

#: The attribute a started thread's origin is kept in.
_ORIGIN = "_workbench_origin"
#: Files whose frames are not a thread's origin (the machinery that starts it).
_MACHINERY = (threading.__file__, contextlib.__file__)


@dataclass(frozen=True)
class Origin:
    """Where a thread was started: the file, line and function (``co_qualname``) that called ``start``."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclass(frozen=True)
class ThreadLeft:
    """A non-daemon thread still alive when the command is done."""

    name: str
    origin: Origin | None


def _origin() -> Origin | None:
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename in _MACHINERY or frame.f_code.co_filename == __file__):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    return Origin(code.co_filename, frame.f_lineno, getattr(code, "co_qualname", code.co_name))


@contextlib.contextmanager
def recording_origins() -> Iterator[None]:
    """Within, every ``threading.Thread`` started keeps where it was started (for :func:`threads_left`)."""
    real = threading.Thread.start

    def start(self: threading.Thread) -> None:
        with contextlib.suppress(Exception):  # never a reason for a thread not to start
            setattr(self, _ORIGIN, _origin())
        real(self)

    threading.Thread.start = start  # type: ignore[method-assign]
    try:
        yield
    finally:
        threading.Thread.start = real  # type: ignore[method-assign]


def threads_left() -> list[ThreadLeft]:
    """The non-daemon threads alive now other than this one and the main thread: those the interpreter would
    wait for at exit. A ``concurrent.futures`` pool's workers are left out (the interpreter tells them to
    stop, and they do)."""
    me, main = threading.current_thread(), threading.main_thread()
    return [ThreadLeft(t.name, getattr(t, _ORIGIN, None)) for t in threading.enumerate()
            if t.is_alive() and not t.daemon and t not in (me, main)
            and getattr(getattr(t, "_target", None), "__module__", "") != "concurrent.futures.thread"]


#: ``os._exit`` as it was when this module was imported: :func:`exit_now` ends the process with it even after
#: :func:`status_kept_at_exit` has made later calls harmless.
_OS_EXIT = os._exit


def status_kept_at_exit(status: int) -> None:
    """From the moment the interpreter starts running ``atexit`` functions, a call of ``os._exit`` by one of them
    no longer ends the process: it is named on stderr and the command still exits with ``status``. Registered
    after the command ran, so it runs before the functions registered earlier (they run last first). Why: a
    catalog ``spec.py`` that registered ``atexit.register(lambda: os._exit(0))`` made ``verify`` exit 0 after it
    had printed an error (a CI gate passed on nothing)."""

    def ignored(code: int) -> None:
        with contextlib.suppress(BaseException):
            print(f"workbench: note: code run at exit called os._exit({code}); ignored: the command's exit status "
                  f"is {status}", file=sys.stderr)

    def guard() -> None:
        os._exit = ignored  # type: ignore[assignment]

    atexit.register(guard)


def exit_now(status: int) -> NoReturn:
    """End this process with ``status`` without waiting for its threads: ``atexit`` functions run (temporary
    folders are removed), standard streams are flushed, then ``os._exit``."""
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            if stream is not None:
                stream.flush()
    _OS_EXIT(status)

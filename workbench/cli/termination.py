"""SIGTERM and SIGHUP (and SIGUSR1/2) end a command the way Ctrl-C does: a sweep stops between cells, its run is
closed as interrupted (never left "running"), and the line that resumes it is printed. Before, either signal
killed the process where it stood: exit 143, no message, a run that ``bench --resume`` then had to take for dead."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from workbench.core.signal_handlers import handlers_replaced

#: The signals turned into :class:`Terminated` (those this platform has): SIGTERM and SIGHUP, and the user signals,
#: whose default also ends a process where it stands (SIGUSR1 mid-sweep: exit 138, no message, a run nobody closed).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2") if hasattr(signal, name))


class Terminated(KeyboardInterrupt):
    """A KeyboardInterrupt that came from SIGTERM or SIGHUP: every handler of Ctrl-C handles it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended. The command does not exit
        with it: every stop signal exits 130, as Ctrl-C does (docs/cli.md), so a script tells "stopped" by one
        status whichever signal stopped it."""
        return 128 + self.signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    for other in SIGNALS:  # the command is stopping now: a second signal must not cut its closing short
        if signal.getsignal(other) is _raise_terminated:
            signal.signal(other, _already_stopping)
    raise Terminated(signum)


def _already_stopping(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP again while the first is handled: ignored. A second SIGTERM 50 ms after the first ended
    ``bench`` with exit 143, no message, and its run left "running" (it was closing the run when it came)."""


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """Within, SIGTERM and SIGHUP raise :class:`Terminated` on the main thread; a signal set to be ignored
    stays ignored (``nohup`` ignores SIGHUP), and a handler someone else installed is left alone."""
    with handlers_replaced(SIGNALS, _raise_terminated, lambda handler: handler == signal.SIG_DFL):
        yield


def stop_signals_ignored_from_now() -> None:
    """From now on a stop signal is ignored: the command is done (its status chosen, its run closed), so there
    is nothing left to stop. Python's shutdown puts back the default action of every signal it handles, and a
    SIGTERM that came then (a second one, 50 ms after the first, as a supervisor sends) killed the process while
    it unloaded its modules: exit 143 after the run had been closed and its resume line printed for status 130.
    An ignored signal stays ignored through the shutdown; SIGKILL still ends it."""
    for signum in SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, _already_stopping, _raise_terminated):
            signal.signal(signum, signal.SIG_IGN)

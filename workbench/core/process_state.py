"""Process-wide state that code we run in this process (a catalog file, an in-process kernel) must not change for the
command: the working directory, the umask, the recursion limit, the standard streams and their file descriptors
0-2, and the builtins. (Not the environment:
the workbench itself sets variables there the first time a backend is prepared, which may be inside a cell.)

Why: with cells in this process (``bench --in-process``), a variant calling ``os.umask(0o777)`` made the report
written after the sweep unreadable (mode 000); ``sys.setrecursionlimit(60)`` made it fail ("maximum recursion
depth exceeded", the rows stored, the report lost); ``sys.stdout = open(os.devnull, "w")`` swallowed the results
table (exit 0, nothing printed); ``sys.stderr.close()`` ended the command ("lost sys.stderr", exit 1). A
``spec.py`` calling ``os.chdir`` at import put ``--store rel.sqlite`` and ``--json rel.json`` in the folder it
chose. A ``spec.py`` calling ``os.close(1)`` ended ``verify`` in "error: [Errno 9] Bad file descriptor" (naming
nothing), and one setting ``builtins.print = None`` in a traceback. :func:`process_state_kept` puts each back after
the code ran and says what was changed.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


class Unclosable:
    """A standard stream as code we run sees it: writes pass on, ``close`` does nothing."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def close(self) -> None:
        """The command's output is not closed by the code it runs."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # removed from under us
        return None


def _open_cwd() -> int | None:
    """The working directory held open (it is found again even if renamed), or None where it cannot be."""
    try:
        return os.open(".", getattr(os, "O_PATH", os.O_RDONLY))
    except OSError:
        return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


STD_FDS = {0: "stdin", 1: "stdout", 2: "stderr"}


def _fd_identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _std_fds_held() -> dict[int, tuple[int, tuple[int, int]]]:
    """Each open standard descriptor: a duplicate of it, and what it was open on."""
    held = {}
    for fd in STD_FDS:
        ident = _fd_identity(fd)
        if ident is not None:
            with contextlib.suppress(OSError):
                held[fd] = (os.dup(fd), ident)
    return held


def _std_fds_put_back(held: dict[int, tuple[int, tuple[int, int]]]) -> list[str]:
    """Each standard descriptor closed or pointed elsewhere since :func:`_std_fds_held`, put back; named."""
    changed = []
    for fd, (dup, ident) in held.items():
        if _fd_identity(fd) != ident:
            with contextlib.suppress(OSError):
                os.dup2(dup, fd)
            changed.append(f"file descriptor {fd} ({STD_FDS[fd]})")
        with contextlib.suppress(OSError):
            os.close(dup)
    return changed


def _builtins_put_back(saved: dict[str, Any]) -> list[str]:
    """Each builtin replaced or deleted since ``saved`` was taken, put back; named."""
    now = vars(builtins)
    names = [name for name, value in saved.items() if now.get(name, _MISSING) is not value]
    for name in names:
        now[name] = saved[name]
    return [f"builtins.{', builtins.'.join(names)}"] if names else []


_MISSING = object()


@contextlib.contextmanager
def process_state_kept(what: str, stdout_to_stderr: bool = False) -> Iterator[None]:
    """Within, the standard streams cannot be closed (``stdout_to_stderr``: what is printed goes to stderr); after,
    the working directory, umask, recursion limit, ``sys.stdout/stderr/stdin``, descriptors 0-2 and the builtins
    are as they were before, and a warning names ``what`` and each thing it changed."""
    streams = sys.stdout, sys.stderr, sys.stdin
    fds, names = _std_fds_held(), dict(vars(builtins))
    before, here = _cwd(), _open_cwd()
    mask, limit = _umask(), sys.getrecursionlimit()
    out = streams[1] if stdout_to_stderr and streams[1] is not None else streams[0]
    sys.stdout = Unclosable(out) if out is not None else None  # type: ignore[assignment]
    sys.stderr = Unclosable(streams[1]) if streams[1] is not None else None  # type: ignore[assignment]
    try:
        yield
    finally:
        changed = _std_fds_put_back(fds) + _builtins_put_back(names)
        if _cwd() != before:
            changed.append("the working directory")
        if here is not None:
            os.fchdir(here)
            os.close(here)
        elif before is not None:
            os.chdir(before)
        if _umask() != mask:
            changed.append("the umask")
            os.umask(mask)
        if sys.getrecursionlimit() != limit:
            changed.append("the recursion limit")
            sys.setrecursionlimit(limit)
        if sys.stdin is not streams[2]:
            changed.append("sys.stdin")
        if not isinstance(sys.stdout, Unclosable) or not isinstance(sys.stderr, Unclosable):
            changed.append("sys.stdout or sys.stderr")
        sys.stdout, sys.stderr, sys.stdin = streams
        if changed:
            log.warning("%s changed %s for the whole process; put back", what, ", ".join(changed))

"""Text that reaches a terminal: never a control sequence that came from a kernel or a user.

Why: kernel folder names, variant names, a variant's exception and run names are data. An escape sequence in
one cleared the screen and retitled the window through ``bench``'s table, progress and failure list and
``verify``; U+202E (right-to-left override) in a run name turned ``runs``' columns around. :func:`terminal_safe`
shows such characters as escapes (``\\x1b``, ``\\u202e``) instead, and the command line prints everything
through :class:`SafeTextStream` (installed on stdout and stderr by :func:`safe_std_streams`), so no print path
can forget it. The same stream makes output encoding never fail: a character the locale cannot encode (``µ``
under ``LC_ALL=C``) is written as an escape, and a closed pipe stops the printing but not the command's work.
Our own cursor control (a progress line redrawn in place) writes to :func:`raw_stream`, with its text made safe.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: C0 controls but tab, line feed and carriage return; DEL and C1 controls; bidirectional overrides, embeddings,
#: isolates and marks; line and paragraph separators; lone surrogates (a path argument's byte that is not UTF-8,
#: ``--store $'\\xff.sqlite'``: no UTF-8 stream can write one, and printing the error about it failed).
UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                          "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: The same, carriage return included: for one-line text (names, a progress description).
UNSAFE_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                            "\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: Any, one_line: bool = False) -> str:
    """``str(text)`` with every control character (see :data:`UNSAFE_CHARS`) written as a visible escape;
    ``one_line``: line breaks and tabs too (a name, a table cell)."""
    s = text if isinstance(text, str) else str(text)
    return (UNSAFE_IN_LINE if one_line else UNSAFE_CHARS).sub(_escape, s)


class SafeTextStream:
    """A text stream whose ``write`` passes :func:`terminal_safe` text on, and which never fails on encoding
    (the locale's) or a closed pipe: after a broken pipe it drops further output and says so in ``broken``."""

    def __init__(self, stream: TextIO):
        self.raw = stream
        self.broken = False
        #: The first error other than a broken pipe that writing met (``> /dev/full``: no space left), or None.
        self.failed: OSError | None = None
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if reconfigure is not None and encoding not in ("utf8", "utf8sig"):
            try:
                reconfigure(errors="backslashreplace")  # `LC_ALL=C`: µ prints as \xb5, never an error
            except (ValueError, OSError):
                pass

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self.raw.write(terminal_safe(text))
        except BrokenPipeError:
            self._break()
            return len(text)
        except OSError as exc:  # a full disk or an I/O error: the output is lost, the command's work is not
            self._fail(exc)
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self.raw.flush()
        except BrokenPipeError:
            self._break()
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """Writing failed (not a reader leaving): kept in ``failed`` for the command to say, output dropped."""
        self.failed = self.failed or exc
        self._break()

    def _break(self) -> None:
        """The reader left (``| head``): further output goes nowhere, and the command goes on with its work."""
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.raw.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a :class:`SafeTextStream` (for our own control sequences), else ``stream``."""
    return stream.raw if isinstance(stream, SafeTextStream) else stream


class SafeLogHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log records written to whatever ``sys.stderr`` is when they are emitted, their text terminal-safe.

    Why: logging's own handler keeps the stderr it found at ``import workbench``, before the command installs
    its :class:`SafeTextStream`: a catalog file whose error held an escape sequence ("catalog file ... failed to
    load: ...") reached the terminal raw through it."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        """Ignored: the stream is always the current ``sys.stderr``."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


@contextmanager
def safe_std_streams() -> Iterator[tuple[SafeTextStream, SafeTextStream]]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`SafeTextStream` for the duration (restored after)."""
    saved = sys.stdout, sys.stderr
    out = saved[0] if isinstance(saved[0], SafeTextStream) else SafeTextStream(saved[0])
    err = saved[1] if isinstance(saved[1], SafeTextStream) else SafeTextStream(saved[1])
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved

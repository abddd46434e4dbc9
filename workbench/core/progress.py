"""Progress of a sweep that reaches a log as well as a terminal.

On a terminal (or in a notebook) a sweep shows tqdm's bar. Redirected to a file, a bar is carriage-return
noise, and without one a log stayed empty for a 29-minute run. There :class:`LogProgress` writes one line
when a group of cells finishes (a kernel, in one round) or every :data:`LOG_EVERY_S` seconds, whichever
comes first, with cells done / total and the estimated time left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from workbench.core.terminal_text import raw_stream, terminal_safe

#: Longest silence of a log while a sweep runs.
LOG_EVERY_S = 10.0


def make_progress(total: int, initial: int = 0, enabled: bool = True, stream: TextIO | None = None) -> Any:
    """A progress display for ``total`` cell rounds (``initial`` already done), or None when not ``enabled``:
    tqdm's bar on a terminal or in a notebook, :class:`LogProgress` otherwise. Both take ``update``,
    ``set_description_str``, ``set_postfix_str``, ``set_group`` and ``close``."""
    if not enabled:
        return None
    stream = stream if stream is not None else sys.stderr
    if _interactive(stream):
        from tqdm.auto import tqdm

        # tqdm redraws its line with control characters of its own: it writes to the stream itself, and the
        # names it shows (kernel, variant: data) are made terminal-safe by TerminalProgress
        return TerminalProgress(tqdm(total=total, initial=initial, unit="cell", dynamic_ncols=True, leave=True,
                                     file=raw_stream(stream)))
    return LogProgress(total, initial, stream)


def _interactive(stream: TextIO) -> bool:
    """A terminal, or a Jupyter kernel's own output stream (not a tty, but it shows tqdm's widget); a log file
    or a buffer in a process that merely imported ipykernel is not."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or type(stream).__module__.startswith("ipykernel")


class TerminalProgress:
    """tqdm's bar, which has no use for groups."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def set_group(self, group: str) -> None:
        """Groups show in the bar's description already."""

    def set_description_str(self, description: str, refresh: bool = True) -> None:
        self.bar.set_description_str(terminal_safe(description, one_line=True), refresh=refresh)

    def set_postfix_str(self, postfix: str, refresh: bool = True) -> None:
        self.bar.set_postfix_str(terminal_safe(postfix, one_line=True), refresh=refresh)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bar, name)


class LogProgress:
    """Plain lines for a log: ``12/318 cell rounds (4%), 35 s elapsed, about 14 min left: round 1/3: softmax done``
    (a sweep counts each cell once per round)."""

    def __init__(self, total: int, initial: int = 0, stream: TextIO | None = None, every_s: float = LOG_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.done, self.initial = total, initial, initial
        self.stream = stream if stream is not None else sys.stderr
        self.every_s, self.clock = every_s, clock
        self.t0 = self.last = clock()
        self.group: str | None = None
        self.description = ""
        self.postfix = ""

    def set_group(self, group: str) -> None:
        """The group of the cell about to run; the previous one has finished when it changes."""
        if self.group is not None and group != self.group:
            self._write(f"{self.group} done")
        self.group = group

    def set_description_str(self, description: str, refresh: bool = True) -> None:
        self.description = description
        self._maybe_write()

    def set_postfix_str(self, postfix: str, refresh: bool = True) -> None:
        self.postfix = postfix
        self._maybe_write()

    def update(self, n: int = 1) -> None:
        self.done += n
        self._maybe_write()

    def close(self) -> None:
        if self.group is not None and self.done >= self.total:
            self._write(f"{self.group} done")
            self.group = None

    def line(self, what: str) -> str:
        """One progress line: cell rounds done / total, time elapsed and left, and ``what``."""
        elapsed = self.clock() - self.t0
        pct = 100.0 * self.done / self.total if self.total else 100.0
        parts = [f"{self.done}/{self.total} cell rounds ({pct:.0f}%)", f"{fmt_duration(elapsed)} elapsed"]
        left = self.seconds_left(elapsed)
        if left is not None:
            parts.append(f"about {fmt_duration(left)} left")
        return ", ".join(parts) + f": {what}"

    def seconds_left(self, elapsed: float) -> float | None:
        """Time left at this run's rate so far (cells finished before it started, as on a resume, don't count)."""
        ran = self.done - self.initial
        if ran <= 0:
            return None
        return elapsed / ran * max(0, self.total - self.done)

    def _maybe_write(self) -> None:
        if self.clock() - self.last >= self.every_s:
            what = self.description + (f" ({self.postfix})" if self.postfix else "")
            self._write(what or "running")

    def _write(self, what: str) -> None:
        self.last = self.clock()
        print(terminal_safe(self.line(what), one_line=True), file=self.stream, flush=True)


def fmt_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"

"""Progress of a sweep that reaches a log as well as a terminal.

On a terminal (or in a notebook) a sweep shows tqdm's bar. Redirected to a file, a bar is carriage-return
noise, and without one a log stayed empty for a 29-minute run. There :class:`LogProgress` writes one line
when a group of cells finishes (a kernel, in one round) or every :data:`LOG_EVERY_S` seconds, whichever
comes first, with cells done / total and the estimated time left.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from workbench.core.terminal_text import raw_stream, terminal_safe

#: Longest silence of a log while a sweep runs.
LOG_EVERY_S = 10.0
#: tqdm's bar without its own time left (the postfix holds the sweep's).
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"


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
        # no tqdm "<remaining": its rate so far counts the set-up and first visits (3-4x too long); the sweep
        # puts its own estimate (TimeLeft) in the postfix
        return TerminalProgress(tqdm(total=total, initial=initial, unit="cell", dynamic_ncols=True, leave=True,
                                     file=raw_stream(stream), bar_format=BAR_FORMAT))
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
        #: Seconds left as the sweep measures them (:class:`TimeLeft`); None: at this run's rate so far.
        self.time_left: Callable[[], float | None] | None = None

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
        """Time left from the visits measured (:attr:`time_left`), else at this run's rate so far (cells
        finished before it started, as on a resume, don't count)."""
        if self.time_left is not None:
            return self.time_left()
        ran = self.done - self.initial
        if ran <= 0:
            return None
        return elapsed / ran * max(0, self.total - self.done)

    def _maybe_write(self) -> None:
        if self.clock() - self.last >= self.every_s:
            self._write(join_status(self.description, self.postfix) or "running")

    def _write(self, what: str) -> None:
        self.last = self.clock()
        print(terminal_safe(self.line(what), one_line=True), file=self.stream, flush=True)


def join_status(description: str, postfix: str) -> str:
    """``softmax numba n=4096 (running 2.1 s)``: the two parts that are not empty (never a bare ``(...)``)."""
    if not description:
        return postfix
    return f"{description} ({postfix})" if postfix else description


class TimeLeft:
    """Seconds a sweep has left, from what its visits of each cell cost so far.

    A cell's first visit costs more than its later ones (inputs made, the float64 reference computed, the
    variant checked, a compile), and the time before the first cell (workers, the ceilings probe) is no
    visit at all: a run's rate so far (elapsed / visits done) read 12 min left where 280 s remained. So a
    cell visited before costs its own later visits' median again; a cell seen once costs its first visit
    times the later / first ratio of the cells seen in both (before any, ``later_prior_s`` at most its
    first); a cell not yet visited costs the mean first visit, then the mean later one."""

    def __init__(self, rounds: int, later_prior_s: float | None = None) -> None:
        self.rounds, self.later_prior_s = rounds, later_prior_s
        self.first: dict[str, float] = {}
        self.later: dict[str, list[float]] = {}

    def add(self, key: str, seconds: float, first: bool | None = None) -> None:
        """One visit of cell ``key`` took ``seconds`` (``first``: its first visit; default: the first this
        estimator has seen of it)."""
        if first if first is not None else key not in self.first:
            self.first[key] = seconds
        else:
            self.later.setdefault(key, []).append(seconds)

    def _later_of(self, first_s: float) -> float:
        both = [k for k in self.later if k in self.first]
        if both:
            firsts = sum(self.first[k] for k in both)
            ratio = sum(statistics.median(self.later[k]) for k in both) / firsts if firsts > 0 else 1.0
            return first_s * ratio
        return min(first_s, self.later_prior_s) if self.later_prior_s is not None else first_s

    def seconds_left(self, remaining: Mapping[str, int]) -> float | None:
        """Seconds for the visits ``remaining`` (cell key: visits left); None before any visit was measured."""
        if not self.first and not self.later:
            return None
        mean_first = statistics.fmean(self.first.values()) if self.first else None
        later_all = [statistics.median(v) for v in self.later.values()]
        mean_later = statistics.fmean(later_all) if later_all else self._later_of(mean_first or 0.0)
        total = 0.0
        for key, n in remaining.items():
            if n <= 0:
                continue
            if key in self.later:
                total += n * statistics.median(self.later[key])
            elif key in self.first:
                total += n * self._later_of(self.first[key])
            elif n >= self.rounds and mean_first is not None:  # never visited: a first visit, then later ones
                total += mean_first + (n - 1) * mean_later
            else:
                total += n * mean_later
        return total


def fmt_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"

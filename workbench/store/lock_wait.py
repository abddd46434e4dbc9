"""Waiting for a store another process holds the write lock of: said at once, bounded, and named on timeout.

Why: a store locked by another process (another ``workbench bench`` writing, a ``sqlite3`` shell holding a
write transaction) made a command wait SQLite's busy timeout (60 s) in silence, then fail with "database is
locked". Now the first :data:`NOTE_AFTER_S` of waiting is silent (writers of one store take turns in
milliseconds), then one stderr line says the store is locked by another process and how long the command will
wait; past the limit, the error names the store and the processes that have it open. Nothing is written
before the lock is taken, so nothing stored is lost.
"""

from __future__ import annotations

import os
import sqlite3
import sys

import psutil

from workbench.store.errors import StoreError

#: Seconds of waiting for the write lock before saying so.
NOTE_AFTER_S = 1.0


def is_locked(exc: BaseException) -> bool:
    """``exc`` is SQLite's "database is locked" (another connection holds the lock past the busy timeout)."""
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()


def holders(path: str | os.PathLike) -> list[str]:
    """The other processes of this user that have the store (or its ``-wal`` file) open, as ``pid N (command)``;
    empty when none can be seen (another user's, another machine's over a network file system)."""
    wanted = {os.path.realpath(os.fspath(path))}
    wanted |= {f"{p}-wal" for p in wanted}
    me, uid, found = os.getpid(), os.getuid(), []
    for proc in psutil.process_iter(["pid", "uids", "cmdline", "name"]):
        uids = proc.info.get("uids")
        if proc.pid == me or uids is None or uids.real != uid:
            continue
        try:
            if any(f.path in wanted for f in proc.open_files()):
                command = " ".join(" ".join(proc.info.get("cmdline") or []).split()) or proc.info.get("name") or "?"
                found.append(f"pid {proc.pid} ({command[:80]})")
        except (psutil.Error, OSError):
            continue
    return found


def _held_by(path: str | os.PathLike) -> str:
    procs = holders(path)
    return f" ({', '.join(procs[:3])}{', ...' if len(procs) > 3 else ''} has it open)" if procs else ""


def locked_message(path: str | os.PathLike, waited_s: float) -> str:
    """The one-line error for a store still locked after ``waited_s``."""
    return (f"results store {path} is locked by another process{_held_by(path)}: still locked after {waited_s:.0f} "
            "s, so nothing was written; run again when that process is done (or end it)")


def begin_immediate(conn: sqlite3.Connection, path: str | os.PathLike, timeout_s: float) -> None:
    """``BEGIN IMMEDIATE`` on ``conn`` (whose busy timeout is ``timeout_s``), saying on stderr when another
    process holds the lock past :data:`NOTE_AFTER_S`; a :class:`StoreError` when it holds it past
    ``timeout_s``."""
    first = min(NOTE_AFTER_S, timeout_s)
    waits = [first, timeout_s - first] if timeout_s > first else [first]
    try:
        for i, wait_s in enumerate(waits):
            if i:
                print(f"workbench: results store {path} is locked by another process{_held_by(path)}; waiting up "
                      f"to {wait_s:.0f} s for it", file=sys.stderr, flush=True)
            conn.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise
        raise StoreError(locked_message(path, timeout_s))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")

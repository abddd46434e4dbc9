"""Opening a store's SQLite file, its write transactions and its checkpoints: what every part of the store uses.

Why this shape: several processes write one file at once (WAL mode, a busy timeout, and every write in a
short ``BEGIN IMMEDIATE`` transaction that takes the write lock up front). Committed rows sit in the ``-wal``
file until a checkpoint moves them into the main file: the store checkpoints after creating or finishing a
run and every few rows or seconds (:data:`CHECKPOINT_EVERY_ROWS`, :data:`CHECKPOINT_EVERY_S`), so a ``-wal``
lost after a kill costs at most those rows. A damaged store is refused before anything is written into it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from workbench.core.record import RowDict
from workbench.core.regular_files import file_kind
from workbench.store.errors import StoreError, damaged_store_message, describe_sqlite_error, read_only_folder
from workbench.store.lock_wait import begin_immediate
from workbench.store.schema import DEFAULT_STORE_NAME, EXPORT_VERSION, SCHEMA, create_tables, default_store_path

log = logging.getLogger(__name__)

#: A checkpoint (rows from the -wal into the main file) after this many rows or seconds of rows.
CHECKPOINT_EVERY_ROWS = 8
CHECKPOINT_EVERY_S = 5.0
#: The newest store layout (``meta.schema_version``) this workbench reads and writes.
STORE_SCHEMA_VERSION = int(EXPORT_VERSION)
#: The page size of a store that a large import creates (SQLite's default, 4096, is every other new store's:
#: a sweep commits a row at a time, and each commit writes whole pages). A real row carries its samples, host
#: samples and round medians (5.5 KB on average): at 4 KB a page, each row spilled into overflow pages, and
#: SQLite wrote a million of them at half the speed (issue 38: 200k such rows 5.3 s at 4 KB, 3.1 s at 16 KB).
BULK_PAGE_SIZE = 16384

_Self = TypeVar("_Self", bound="StoreConnection")


class WriteTransaction:
    """``with store._write() as c``: the store's lock and SQLite's write lock held, committed on leaving (rolled
    back on an exception)."""

    def __init__(self, store: StoreConnection):
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.store._lock.acquire()
        try:
            begin_immediate(self.store._conn, self.store.path, self.store.timeout_s)
        except BaseException:
            self.store._lock.release()
            raise
        return self.store._conn

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        try:
            self.store._conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.store._lock.release()


class StoreConnection:
    """A store's file opened (created when missing): the connection, its lock, transactions and checkpoints.

    ``read_only``: the file must exist, is opened without writing anything, and an older store is read as it
    is. ``verify``: a store that fails SQLite's quick check is refused before it is written.
    """

    def __init__(self, path: str | os.PathLike | None = None, timeout_s: float = 60.0, read_only: bool = False,
                 verify: bool = True, page_size: int | None = None):
        if path is not None and not str(path).strip():
            raise StoreError("the store path is empty; give a file such as results.sqlite (or leave --store out "
                             f"for {default_store_path()})")
        self.path = Path(path) if path is not None else default_store_path()
        self.read_only = read_only
        self.timeout_s = timeout_s
        if self.path.is_dir():
            raise StoreError(f"store path {self.path} is a folder; give a file in it, e.g. "
                             f"{self.path / DEFAULT_STORE_NAME}")
        self._refuse_non_regular()
        self._lock = threading.RLock()
        self._rows_since_checkpoint, self._checkpointed_at = 0, time.monotonic()
        try:
            if read_only:
                self._conn = self._connect_read_only(timeout_s)
                self._require_tables()
            else:
                if verify:  # a damaged store is never written into (checked before the schema is touched)
                    self._require_healthy(timeout_s)
                self._conn = self._connect_read_write(timeout_s, page_size)
        except sqlite3.DatabaseError as exc:
            raise StoreError(describe_sqlite_error(self.path, exc)) from None

    def _refuse_non_regular(self) -> None:
        """A store is a regular file: a FIFO (or a symlink to /dev/null) read as "no runs" and failed its writes
        with "disk I/O error"; it is refused by name instead."""
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            return  # not there yet (a writer creates it) or not reachable (opening says why)
        if not stat.S_ISREG(mode):
            real = os.path.realpath(self.path)
            shown = f" (it points to {real})" if os.path.islink(self.path) else ""
            raise StoreError(f"store path {self.path}{shown} is {file_kind(mode)}, not a regular file: a results "
                             "store is an SQLite file; give another --store")

    def _require_schema_version(self, conn: sqlite3.Connection) -> None:
        """Nothing is written to a store of a layout newer than ours (``meta.schema_version``) or one we cannot
        read: another workbench made it, and our writes could break it."""
        try:
            found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:  # no meta table: a new store, one from before it, or another program's
            tables = sorted(r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
            if tables and not {"runs", "results"} <= set(tables):
                shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
                raise StoreError(f"results store {self.path} is an SQLite database of another program (tables: "
                                 f"{shown}), not a workbench results store; nothing was written to it: give "
                                 "another --store") from None
            return
        message = schema_version_problem(found[0] if found else None)
        if message:
            raise StoreError(f"results store {self.path}: {message}; nothing was written to it")

    def _require_healthy(self, timeout_s: float) -> None:
        """SQLite's quick check of an existing store, read-only: a damaged one raises StoreError."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
        try:
            problems = [m for (m,) in conn.execute("PRAGMA quick_check(5)").fetchall() if m != "ok"]
        finally:
            conn.close()
        if problems:
            lines = [ln for m in problems for ln in m.splitlines() if ln.strip() and not ln.startswith("***")]
            raise StoreError(damaged_store_message(self.path, "; ".join(lines[:2]) or "damaged pages"))

    def _connect_read_only(self, timeout_s: float) -> sqlite3.Connection:
        if not self.path.exists():
            raise FileNotFoundError(f"no results store at {self.path} (run `workbench bench` first, or pass "
                                    "--store)")
        if self._empty_file():  # a kill early in a first run leaves 0 bytes: a new store, with no runs yet
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.executescript(SCHEMA)
            return conn
        uri = self.path.resolve().as_uri()
        try:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout_s, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            # a WAL store in a folder we cannot write (no -shm file can be made): read it as immutable
            conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=timeout_s, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn

    def _connect_read_write(self, timeout_s: float, page_size: int | None = None) -> sqlite3.Connection:
        if not self.path.parent.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of store {self.path}: {exc.strerror or exc}") from None
        folder = read_only_folder(self.path)
        if folder is not None:  # SQLite would say only "unable to open database file"
            raise StoreError(f"cannot write to store {self.path}: {folder}; give a writable --store, or only "
                             "read it (`workbench runs`, `report`, `export` open it read-only)")
        conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
        self._conn = conn
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        self._require_schema_version(conn)  # before the first write (even the journal mode is one)
        if page_size is not None:  # a new store's only (before WAL is on); an existing store keeps its own
            conn.execute(f"PRAGMA page_size = {int(page_size)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: durable across process crashes
        with self._write() as c:
            create_tables(c)
        return conn

    def _empty_file(self) -> bool:
        """0 bytes and no write-ahead log with content: nothing was ever committed here."""
        wal = Path(f"{self.path}-wal")
        return self.path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0)

    def _require_tables(self) -> None:
        names = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"runs", "results"} - names
        if missing:
            raise StoreError(f"{self.path} is an SQLite file but not a workbench results store (no "
                             f"{', '.join(sorted(missing))} table)")

    # -- plumbing ----------------------------------------------------------
    def _write(self) -> WriteTransaction:
        """A write transaction that takes the write lock up front, so the busy timeout applies."""
        return WriteTransaction(self)

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[RowDict]:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def checkpoint(self) -> None:
        """Move the write-ahead log into the main file, so that the ``.sqlite`` file alone holds every row
        (copying it without its ``-wal`` file then loses nothing). Best effort: a busy reader may delay it."""
        if not self.read_only:
            self._wal_checkpoint("TRUNCATE")

    def _wal_checkpoint(self, mode: str) -> None:
        """One ``wal_checkpoint`` in ``mode`` (TRUNCATE or PASSIVE); a failure is logged, not raised."""
        try:
            with self._lock:
                self._conn.execute(f"PRAGMA wal_checkpoint({mode})")
        except sqlite3.DatabaseError as exc:
            log.info("checkpoint of %s failed: %s", self.path, exc)

    def _checkpoint_soon(self, rows: int = 1) -> None:
        """After ``rows`` more committed rows: a passive checkpoint (it never waits for readers) once
        :data:`CHECKPOINT_EVERY_ROWS` rows or :data:`CHECKPOINT_EVERY_S` seconds have gathered, so a lost
        ``-wal`` file costs at most those rows; ``rows=0`` checkpoints now (a run created or finished)."""
        self._rows_since_checkpoint += rows
        due = (rows == 0 or self._rows_since_checkpoint >= CHECKPOINT_EVERY_ROWS
               or time.monotonic() - self._checkpointed_at >= CHECKPOINT_EVERY_S)
        if not due or self.read_only:
            return
        self._wal_checkpoint("PASSIVE")
        self._rows_since_checkpoint, self._checkpointed_at = 0, time.monotonic()

    def close(self) -> None:
        self.checkpoint()
        with self._lock:
            self._conn.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"


def schema_version_problem(value: object) -> str | None:
    """What is wrong with a store's ``meta.schema_version`` for this workbench (None: nothing; a store without
    one is an older or a new store)."""
    if value is None:
        return None
    try:
        version = int(str(value).strip())
    except ValueError:
        return (f"its schema version {str(value)[:40]!r} is not one this workbench knows (it writes "
                f"{STORE_SCHEMA_VERSION})")
    if version > STORE_SCHEMA_VERSION:
        return (f"its schema version is {version}, and this workbench knows versions 1 to "
                f"{STORE_SCHEMA_VERSION}: a newer workbench made it (upgrade to write it), or it is not ours")
    if version < 1:  # no workbench ever wrote one: "a newer workbench made it" was said of version -1 too
        return (f"its schema version is {version}, and no workbench writes a version below 1 (this one knows 1 "
                f"to {STORE_SCHEMA_VERSION}): it is not ours, or it was changed by hand")
    return None

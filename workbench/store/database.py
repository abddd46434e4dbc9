"""The results store: one SQLite file holding runs, environments, result rows and measured peaks.

Why SQLite: one file that can be copied, inspected with any SQLite tool and
written by several processes at once (WAL mode, a busy timeout, and every write
in a short ``BEGIN IMMEDIATE`` transaction). A sweep commits each row as soon as
its cell finishes, so a crash or SIGKILL loses at most the cell that was running.
Committed rows sit in the ``-wal`` file until a checkpoint moves them into the
main file: the store checkpoints after creating or finishing a run and every
few rows or seconds (:data:`CHECKPOINT_EVERY_ROWS`, :data:`CHECKPOINT_EVERY_S`),
so a ``-wal`` lost after a kill costs at most those rows, and ``store check``
names the run that is short of cells.

A store whose pages are damaged is refused by every writer (``bench``,
``import``): one message says to run ``workbench store check`` and to restore
from an export; nothing is written into it.

Everything stored is plain text, numbers or JSON text. Reading a store — or
importing another machine's export — only ever parses JSON; nothing is
unpickled or evaluated, so a file from elsewhere cannot run code here.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import re
import secrets
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.frames import share_strings
from workbench.core.output_guard import check_output_path, write_output
from workbench.core.processes import pid_alive
from workbench.core.record import RESULT_COLUMNS
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.store.import_stream import stored_value as _jsonable
from workbench.store.import_stream import value_batches

if TYPE_CHECKING:  # pandas costs ~0.25 s and 45 MB a process; loaded only to return a table
    import pandas as pd

log = logging.getLogger(__name__)

ENV_STORE = "WORKBENCH_STORE"
DEFAULT_STORE_NAME = "workbench-results.sqlite"
EXPORT_FORMAT = "workbench-results"
EXPORT_VERSION = 1
RUN_STATUSES = ("running", "finished", "interrupted")
#: A checkpoint (rows from the -wal into the main file) after this many rows or seconds of rows.
CHECKPOINT_EVERY_ROWS = 8
CHECKPOINT_EVERY_S = 5.0

RUN_COLUMNS: dict[str, str] = {
    "run_id": "TEXT PRIMARY KEY", "created_at": "TEXT", "finished_at": "TEXT", "name": "TEXT", "suite": "TEXT",
    "argv": "TEXT", "env_id": "TEXT", "status": "TEXT", "git_commit": "TEXT", "spec": "TEXT", "wall_s": "REAL",
    # JSON {cell_key, label, started_at} of the cell running now, written before it runs: a run that died
    # in it (a crash without process isolation, a kill) shows which cell to blame on --resume.
    "in_flight": "TEXT",
    # The process writing the run (host, pid) and when it last stored a row: a live owner's run is never
    # resumed by another process.
    "owner_host": "TEXT", "owner_pid": "INTEGER", "heartbeat_at": "TEXT",
}
PEAK_COLUMNS: dict[str, str] = {
    "env_id": "TEXT", "backend": "TEXT", "metric": "TEXT", "dtype": "TEXT", "value": "REAL", "unit": "TEXT",
    "method": "TEXT", "measured_at": "TEXT", "details": "TEXT",
}

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs ({", ".join(f"{k} {t}" for k, t in RUN_COLUMNS.items())});
CREATE TABLE IF NOT EXISTS environments (env_id TEXT PRIMARY KEY, record TEXT NOT NULL, created_at TEXT);
CREATE TABLE IF NOT EXISTS results ({", ".join(f"{k} {t}" for k, t in RESULT_COLUMNS.items())},
    extra TEXT, UNIQUE(run_id, cell_key));
CREATE INDEX IF NOT EXISTS results_run ON results(run_id);
CREATE TABLE IF NOT EXISTS peaks ({", ".join(f"{k} {t}" for k, t in PEAK_COLUMNS.items())},
    PRIMARY KEY (env_id, backend, metric, dtype));
"""


def default_store_path() -> Path:
    """``$WORKBENCH_STORE`` or ``./workbench-results.sqlite``."""
    return Path(os.environ.get(ENV_STORE) or DEFAULT_STORE_NAME)


#: New run ids drawn before giving up when each is taken already.
RUN_ID_TRIES = 8


def new_run_id() -> str:
    """Sortable by time and unique across machines: ``20261122T015700Z-3f9a1c``."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@lru_cache(maxsize=1)
def current_environment() -> tuple[str, dict[str, Any]]:
    """(env_id, record) of this machine, from :mod:`workbench.store.environment` (collected once per process).

    Falls back to a small record of the host when that module is missing or
    fails, so a sweep never dies for want of a description of the machine.
    """
    try:
        from workbench.store.environment import collect_environment, environment_id

        env = collect_environment()
        return str(env.get("environment_id") or environment_id(env)), env
    except Exception as exc:  # noqa: BLE001 - ImportError or a bug elsewhere: describe the host minimally
        log.warning("environment record unavailable (%s); using a minimal host record", exc)
    import hashlib

    import numpy as np

    env = {"host": {"machine": platform.machine(), "system": platform.system(), "processor": platform.processor(),
                    "python": platform.python_version(), "cpu_count": os.cpu_count()},
           "packages": {"numpy": np.__version__}, "fallback": True}
    blob = json.dumps(env, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16], env


def git_commit() -> str | None:
    """The commit of the workbench checkout, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5)
        return (out.stdout.strip() or None) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _finite(v: Any) -> Any:
    """Infinities become None in exports: strict JSON has no Infinity."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def describe_sqlite_error(path: str | os.PathLike, exc: BaseException) -> str:
    """What an SQLite error on opening or writing ``path`` means for the user, in one or two lines."""
    text = str(exc)
    low = text.lower()
    if "file is not a database" in low or "malformed" in low or "not a database" in low:
        return damaged_store_message(path, text)
    if "disk is full" in low or "database or disk is full" in low:
        return (f"cannot write to store {path}: the disk is full; free some space (rows stored so far are kept) "
                "and resume with `workbench bench --resume`")
    if "readonly" in low or "read-only" in low or "attempt to write" in low:
        return (f"cannot write to store {path}: it is read-only ({text}); give a writable --store, or only read "
                "it (`workbench runs`, `report`, `export` open it read-only)")
    if "unable to open" in low:
        return f"cannot open store {path} ({text}): check that its folder exists and is readable"
    return f"store {path}: {text}"


#: Longest run name: it is shown in tables and report titles, and an export of the run must import again.
MAX_RUN_NAME_CHARS = 256
_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_run_name(name: str | None, flag: str = "name") -> None:
    """A run name is printable text of at most :data:`MAX_RUN_NAME_CHARS` characters: an escape sequence
    would reach the terminal of whoever lists the runs, and `workbench import` refuses both."""
    if name is None:
        return
    if len(name) > MAX_RUN_NAME_CHARS:
        raise ValueError(f"{flag}: a name of {len(name):,} characters is longer than the limit of "
                         f"{MAX_RUN_NAME_CHARS}")
    bad = _CONTROL_CHARS.search(name)
    if bad:
        raise ValueError(f"{flag} {name[:60]!r} holds a control character ({bad.group()!r} at {bad.start()}); "
                         "a run name must be printable text")


def damaged_store_message(path: str | os.PathLike, detail: str) -> str:
    """The one message every command gives for a store it cannot read: what is wrong and what to do."""
    return (f"results store {path} is damaged or not a workbench results store ({detail}); nothing was written "
            f"to it. Run `workbench store check --store {path}` to see what is wrong, then restore it from an export "
            "(`workbench import FILE.json --store NEW.sqlite`) or give another --store")


class StoreError(ValueError):
    """A store that cannot be opened or written: the message names the file, what is wrong and what to do."""


class Store:
    """A results store at ``path`` (created when missing). Safe to share between threads and processes.

    ``read_only``: for commands that only read (``runs``, ``report``, ``export``, ``compare``): the file
    must exist, is opened without writing anything (an immutable file or a read-only mount still lists),
    and an older store is read as it is, without adding columns.
    """

    def __init__(self, path: str | os.PathLike | None = None, timeout_s: float = 60.0, read_only: bool = False,
                 verify: bool = True):
        if path is not None and not str(path).strip():
            raise StoreError("the store path is empty; give a file such as results.sqlite (or leave --store out "
                             f"for {default_store_path()})")
        self.path = Path(path) if path is not None else default_store_path()
        self.read_only = read_only
        if self.path.is_dir():
            raise StoreError(f"store path {self.path} is a folder; give a file in it, e.g. "
                             f"{self.path / DEFAULT_STORE_NAME}")
        self._lock = threading.RLock()
        self._rows_since_checkpoint, self._checkpointed_at = 0, time.monotonic()
        try:
            if read_only:
                self._conn = self._connect_read_only(timeout_s)
                self._require_tables()
            else:
                if verify:  # a damaged store is never written into (checked before the schema is touched)
                    self._require_healthy(timeout_s)
                self._conn = self._connect_read_write(timeout_s)
        except sqlite3.DatabaseError as exc:
            raise StoreError(describe_sqlite_error(self.path, exc)) from None

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
            conn.executescript(_SCHEMA)
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

    def _connect_read_write(self, timeout_s: float) -> sqlite3.Connection:
        if not self.path.parent.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of store {self.path}: {exc.strerror or exc}") from None
        conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
        self._conn = conn
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: durable across process crashes
        with self._write() as c:
            for stmt in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                c.execute(stmt)
            self._add_missing_columns(c)
            c.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(EXPORT_VERSION),))
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
    class _Tx:
        def __init__(self, store: Store):
            self.store = store

        def __enter__(self) -> sqlite3.Connection:
            self.store._lock.acquire()
            try:
                self.store._conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.store._lock.release()
                raise
            return self.store._conn

        def __exit__(self, exc_type: Any, *_: Any) -> None:
            try:
                self.store._conn.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.store._lock.release()

    def _write(self) -> Store._Tx:
        """A write transaction that takes the write lock up front, so the busy timeout applies."""
        return Store._Tx(self)

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def _add_missing_columns(self, c: sqlite3.Connection) -> None:
        """Stores written by an older workbench gain new columns (empty) instead of failing."""
        have = {r[1] for r in c.execute("PRAGMA table_info(results)")}
        for name, typ in RESULT_COLUMNS.items():
            if name not in have:
                c.execute(f"ALTER TABLE results ADD COLUMN {name} {typ}")
        have = {r[1] for r in c.execute("PRAGMA table_info(runs)")}
        for name, typ in RUN_COLUMNS.items():
            if name not in have:
                c.execute(f"ALTER TABLE runs ADD COLUMN {name} {typ.replace(' PRIMARY KEY', '')}")

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # -- runs --------------------------------------------------------------
    def new_run(self, *, name: str | None = None, suite: str | None = None, argv: list[str] | None = None,
                env_id: str | None = None, spec: Mapping[str, Any] | None = None) -> str:
        check_run_name(name)
        for attempt in range(RUN_ID_TRIES):  # ids share their second: 400 runs made in one drew the same one
            run_id = new_run_id()
            try:
                with self._write() as c:
                    c.execute("INSERT INTO runs (run_id, created_at, name, suite, argv, env_id, status, git_commit, "
                              "spec) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                              (run_id, now_iso(), name, suite, json.dumps(argv or []), env_id, git_commit(),
                               json.dumps(spec) if spec is not None else None))
                break
            except sqlite3.IntegrityError:
                if attempt == RUN_ID_TRIES - 1:
                    raise
        self._checkpoint_soon(0)  # the run itself survives a lost -wal, so it can be checked and resumed
        return run_id

    def set_run_status(self, run_id: str, status: str, wall_s: float | None = None) -> None:
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}; valid: {', '.join(RUN_STATUSES)}")
        with self._write() as c:
            c.execute("UPDATE runs SET status = ?, finished_at = ?, wall_s = COALESCE(?, wall_s) WHERE run_id = ?",
                      (status, None if status == "running" else now_iso(), wall_s, run_id))
        self._checkpoint_soon(0)

    def set_in_flight(self, run_id: str, marker: Mapping[str, Any] | None) -> None:
        """Record the cell about to run (``marker``: cell_key, label, started_at), or clear it (None)."""
        with self._write() as c:
            c.execute("UPDATE runs SET in_flight = ? WHERE run_id = ?",
                      (json.dumps(dict(marker)) if marker is not None else None, run_id))

    def in_flight(self, run_id: str) -> dict[str, Any] | None:
        """The cell a run had in flight when it last stopped without finishing it, or None."""
        try:
            rows = self._query("SELECT in_flight FROM runs WHERE run_id = ?", (run_id,))
        except sqlite3.OperationalError:  # an older store opened read-only has no such column
            return None
        text = rows[0]["in_flight"] if rows else None
        try:
            marker = json.loads(text) if text else None
        except ValueError:
            return None
        return marker if isinstance(marker, dict) and marker.get("cell_key") else None

    def run(self, run_id: str) -> dict[str, Any]:
        """One run's record (``spec`` and ``argv`` decoded from JSON); unknown ids raise ValueError."""
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            known = [r["run_id"] for r in self._query("SELECT run_id FROM runs ORDER BY created_at")]
            raise ValueError(f"unknown run id {run_id!r}; runs in {self.path}: {', '.join(known) or '(none)'}")
        rec = rows[0]
        for k in ("spec", "argv"):
            rec[k] = json.loads(rec[k]) if rec.get(k) else None
        return rec

    def latest_run_id(self, unfinished: bool = False) -> str | None:
        """The newest run (by creation time, then id): what "latest" means for every command. ``unfinished``:
        the newest run not finished and not being written by a live process (what ``--resume`` picks)."""
        where = "WHERE status != 'finished'" if unfinished else ""
        rows = self._query(f"SELECT run_id FROM runs {where} ORDER BY created_at DESC, run_id DESC")
        for r in rows:
            if not unfinished or self.live_owner(r["run_id"]) is None:
                return r["run_id"]
        return None

    # -- ownership ---------------------------------------------------------
    def claim_run(self, run_id: str) -> None:
        """Mark ``run_id`` as written by this process (host, pid, heartbeat now). Raises StoreError when
        another live process owns it."""
        owner = self.live_owner(run_id)
        if owner is not None:
            raise StoreError(f"run {run_id} is being written by {owner}; wait for it to finish, or stop that "
                             "process, before resuming it")
        with self._write() as c:
            c.execute("UPDATE runs SET owner_host = ?, owner_pid = ?, heartbeat_at = ? WHERE run_id = ?",
                      (socket.gethostname(), os.getpid(), now_iso(), run_id))

    def release_run(self, run_id: str) -> None:
        with self._write() as c:
            c.execute("UPDATE runs SET owner_pid = NULL WHERE run_id = ? AND owner_host = ? AND owner_pid = ?",
                      (run_id, socket.gethostname(), os.getpid()))

    def live_owner(self, run_id: str) -> str | None:
        """"process PID on HOST (last row at ...)" when another live process is writing ``run_id``, else None.
        On this host the pid is checked; a run owned on another host counts as live while its heartbeat is
        younger than :data:`HEARTBEAT_STALE_S`."""
        try:
            rows = self._query("SELECT status, owner_host, owner_pid, heartbeat_at FROM runs WHERE run_id = ?",
                               (run_id,))
        except sqlite3.OperationalError:  # an older store (read-only): no owners recorded
            return None
        if not rows or rows[0]["status"] != "running" or not rows[0]["owner_pid"]:
            return None
        host, pid, beat = rows[0]["owner_host"], int(rows[0]["owner_pid"]), rows[0]["heartbeat_at"]
        if host == socket.gethostname():
            if pid == os.getpid() or not pid_alive(pid) or _started_after(pid, beat):
                return None
        elif _age_s(beat) > HEARTBEAT_STALE_S:
            return None
        return f"process {pid} on {host} (last row stored at {beat})"

    def runs(self) -> pd.DataFrame:
        """Every run, oldest first, with its row count and how many rows are ok."""
        rows = self._query(
            "SELECT runs.*, COUNT(results.cell_key) AS n_results, "
            "SUM(CASE WHEN results.status = 'ok' THEN 1 ELSE 0 END) AS n_ok "
            "FROM runs LEFT JOIN results ON results.run_id = runs.run_id "
            "GROUP BY runs.run_id ORDER BY runs.created_at, runs.run_id")
        cols = [*RUN_COLUMNS, "n_results", "n_ok"]
        import pandas as pd

        return pd.DataFrame(rows, columns=cols)

    def drop_run(self, run_id: str) -> dict[str, int]:
        """Remove a run and its rows (environments and peaks stay: other runs may share them). Refuses a
        run a live process is writing."""
        self.run(run_id)  # unknown ids raise, naming the valid ones
        owner = self.live_owner(run_id)
        if owner is not None:
            raise StoreError(f"run {run_id} is being written by {owner}; stop that process first")
        with self._write() as c:
            rows = c.execute("DELETE FROM results WHERE run_id = ?", (run_id,)).rowcount
            c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        self.checkpoint()
        return {"runs": 1, "results": rows}

    def check(self, planned: Callable[[Mapping[str, Any]], tuple[int, int]] | None = None) -> list[str]:
        """Problems found in the store, each in words with what to do ([] when healthy): SQLite's integrity
        check, rows of unknown runs, runs marked running that no live process writes, unreadable JSON, and
        a write-ahead log not yet moved into the main file.
        ``planned(run)``: (cells, rounds) the run's stored sweep plans, so that an interrupted run's missing
        cells are counted (the caller rebuilds the sweep: the store does not know sweeps)."""
        problems: list[str] = []
        for (msg,) in self._conn.execute("PRAGMA integrity_check(20)").fetchall():
            lines = [ln for ln in msg.splitlines() if ln.strip() and not ln.startswith("***")]
            if msg != "ok":
                problems.append(f"SQLite integrity check: {'; '.join(lines[:5])}"
                                + (f" (and {len(lines) - 5} more)" if len(lines) > 5 else ""))
        if problems:
            problems.append("the store is damaged: nothing will be written to it; copy out what `workbench export` "
                            "can read (or restore an earlier export with `workbench import FILE.json --store "
                            "NEW.sqlite`) and use the new store")
            try:
                problems += self._content_problems(planned)
            except sqlite3.DatabaseError as exc:
                problems.append(f"reading the runs and rows failed ({exc})")
            return problems
        return problems + self._content_problems(planned)

    def _content_problems(self, planned: Callable[[Mapping[str, Any]], tuple[int, int]] | None) -> list[str]:
        problems: list[str] = []
        orphans = self._query("SELECT run_id, COUNT(*) AS n FROM results WHERE run_id NOT IN "
                              "(SELECT run_id FROM runs) GROUP BY run_id")
        for o in orphans:
            problems.append(f"{o['n']} rows belong to run {o['run_id']!r}, which is not in the runs table")
        for r in self._query("SELECT run_id, status, spec FROM runs"):
            if r["status"] not in RUN_STATUSES:
                problems.append(f"run {r['run_id']} has an unknown status {r['status']!r}")
            if r["status"] == "running" and self.live_owner(r["run_id"]) is None:
                problems.append(f"run {r['run_id']} is marked running but no live process writes it (killed?)"
                                f"{self._shortfall(r, planned)}: finish it with `workbench bench --resume "
                                f"{r['run_id']}` or remove it with `workbench store drop {r['run_id']}`")
            try:
                json.loads(r["spec"]) if r.get("spec") else None
            except ValueError:
                problems.append(f"run {r['run_id']} has an unreadable spec (it cannot be resumed)")
        bad = 0
        for row in self._query("SELECT params, samples_s FROM results"):
            for k in ("params", "samples_s"):
                try:
                    json.loads(row[k]) if row.get(k) else None
                except ValueError:
                    bad += 1
        if bad:
            problems.append(f"{bad} result fields hold unreadable JSON")
        wal = Path(f"{self.path}-wal")
        if wal.exists() and wal.stat().st_size > 0 and not self.read_only:
            self.checkpoint()
            if wal.stat().st_size > 0:
                problems.append(f"{wal} still holds {wal.stat().st_size} bytes not in {self.path.name} (a reader "
                                "may be open): copy both files together")
        return problems

    def _shortfall(self, run: Mapping[str, Any], planned: Callable[[Mapping[str, Any]], tuple[int, int]] | None) -> str:
        """", and it has 11 of its 24 cells (3 with fewer rounds than 3)": what an interrupted run lacks, from
        ``planned(run)`` (the rows a kill, or a -wal file lost after it, took away); ", and it has N rows" when
        the plan is unknown."""
        rows = self._query("SELECT rounds, status FROM results WHERE run_id = ?", (run["run_id"],))
        try:
            cells, rounds = planned(run) if planned is not None else (None, 1)
        except Exception as exc:  # noqa: BLE001 - a spec this workbench cannot rebuild: say what is stored
            log.info("cannot rebuild the sweep of run %s: %s", run["run_id"], exc)
            cells, rounds = None, 1
        if cells is None:
            return f", and it has {len(rows)} rows"
        short = sum(1 for r in rows if r["status"] == Status.OK and (r["rounds"] or 1) < rounds)
        text = f", and it has {len(rows)} of its {cells} cells"
        if short:
            text += f" ({short} with fewer rounds than {rounds})"
        return text + (" — rows are missing (not yet measured, or lost with a deleted -wal file)"
                       if len(rows) < cells or short else "")

    # -- environments ------------------------------------------------------
    def add_environment(self, env_id: str, record: Mapping[str, Any]) -> None:
        with self._write() as c:
            c.execute("INSERT OR IGNORE INTO environments VALUES (?, ?, ?)",
                      (env_id, json.dumps(record, default=str), now_iso()))

    def environment(self, env_id: str) -> dict[str, Any]:
        rows = self._query("SELECT record FROM environments WHERE env_id = ?", (env_id,))
        if not rows:
            raise KeyError(f"no environment {env_id!r} in {self.path}")
        return json.loads(rows[0]["record"])

    # -- results -----------------------------------------------------------
    def _row_values(self, row: Mapping[str, Any]) -> list[Any]:
        """The row as the results table's values: only the fields the row has are converted (a row holds a
        third of the columns; an import of a million rows converts each one once)."""
        values: list[Any] = [None] * (len(_COLUMN_INDEX) + 1)
        extra = {}
        for k, v in row.items():
            i = _COLUMN_INDEX.get(k)
            if i is not None:
                values[i] = _jsonable(v)
            elif k != "extra":
                extra[k] = _jsonable(v)
        values[-1] = json.dumps(extra) if extra else None
        return values

    def _insert_sql(self, verb: str) -> str:
        cols = [*RESULT_COLUMNS, "extra"]
        return f"{verb} INTO results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"

    def record(self, row: Mapping[str, Any], run_wall_s: float | None = None) -> None:
        """Store one cell's row and commit. A second row for the same (run_id, cell_key) updates it in
        place (a sweep with rounds stores a cell after every round); rows keep their first position.
        ``run_wall_s``: the run's wall time so far, kept on the run in the same transaction."""
        if not row.get("run_id") or not row.get("cell_key"):
            raise ValueError("a result row needs run_id and cell_key")
        cols = [*RESULT_COLUMNS, "extra"]
        update = ", ".join(f"{k} = excluded.{k}" for k in cols if k not in ("run_id", "cell_key"))
        with self._write() as c:
            c.execute(self._insert_sql("INSERT") + f" ON CONFLICT(run_id, cell_key) DO UPDATE SET {update}",
                      self._row_values(row))
            # the cell in flight is done (same transaction: a crash between the two cannot blame it); the
            # heartbeat and wall time move on, so a killed run keeps the wall time it had
            c.execute("UPDATE runs SET in_flight = NULL, heartbeat_at = ?, wall_s = COALESCE(?, wall_s) "
                      "WHERE run_id = ?", (now_iso(), run_wall_s, row["run_id"]))
        self._checkpoint_soon()

    def cell_keys(self, run_id: str) -> set[str]:
        return {r["cell_key"] for r in self._query("SELECT cell_key FROM results WHERE run_id = ?", (run_id,))}

    def rows(self, run_ids: Iterable[str] | str | None = None) -> list[dict[str, Any]]:
        """Result rows as dicts, in the order they were stored; extra fields are merged back in."""
        return [r for batch in self.row_batches(run_ids) for r in batch]

    def row_batches(self, run_ids: Iterable[str] | str | None = None,
                    rows_per_batch: int = 10_000) -> Iterator[list[dict[str, Any]]]:
        """:meth:`rows` a batch at a time (an export of a million rows holds one batch, not all)."""
        where, ids = _run_filter(run_ids)
        with self._lock:
            cur = self._conn.execute(f"SELECT * FROM results {where} ORDER BY rowid", ids)
            cols = [d[0] for d in cur.description]
        while True:
            with self._lock:
                records = cur.fetchmany(rows_per_batch)
            if not records:
                return
            out = []
            for rec in records:
                r = dict(zip(cols, rec, strict=True))
                extra = r.pop("extra", None)
                if extra:
                    parsed = json.loads(extra)
                    if isinstance(parsed, dict):
                        r.update({k: v for k, v in parsed.items() if k not in r})
                out.append(r)
            yield out

    def results(self, run_ids: Iterable[str] | str | None = None,
                columns: Iterable[str] | None = None, share_empty: bool = False) -> pd.DataFrame:
        """Tidy results, one row per cell, the measurement-record columns first.

        JSON columns (``params``, ``samples_s``, ``host_samples_s``) stay JSON text, as
        the contract says; ``json.loads`` them where needed. ``columns``: only these record columns (and
        every extra field), so a reader that needs a few of them never holds all of a million rows.
        ``share_empty``: record columns that are empty (NULL) in every selected row are not read but filled
        with None from one array they all share (a million rows of today's records left 28 of a report's 52
        columns empty: 8 MB each, and 40% of the read).
        """
        import pandas as pd

        wanted = list(RESULT_COLUMNS) if columns is None else [c for c in RESULT_COLUMNS if c in set(columns)]
        # column by column from SQLite (a dict per row first cost ~5 KB a row: gigabytes for a million rows)
        with self._lock:
            where, ids = _run_filter(self._fewer_runs(run_ids))
            have = {r[1] for r in self._conn.execute("PRAGMA table_info(results)")}
            empty = self._empty_columns([c for c in wanted if c in have], where, ids) if share_empty else []
            select = "*" if columns is None and not empty else ", ".join(
                c for c in [*wanted, "extra"] if c in have and c not in empty)
            query = f"SELECT {select} FROM results {where} ORDER BY rowid"
            shared: dict[str, dict[Any, Any]] = {}
            chunks = [share_strings(chunk, shared) for chunk in pd.read_sql_query(
                query, self._conn, params=ids or None, chunksize=RESULT_CHUNK_ROWS)]
            df = _joined(chunks) if chunks else pd.read_sql_query(query, self._conn, params=ids or None)
        if empty:  # as read, they would be object columns of None: one shared array (pandas copies on write)
            import numpy as np

            nulls = pd.Series(np.full(len(df), None, dtype=object), index=df.index)
            df = pd.concat([df, pd.DataFrame(dict.fromkeys(empty, nulls), copy=False)], axis=1)
        extra = df.pop("extra") if "extra" in df else None
        if extra is not None and extra.notna().any():
            parsed = [json.loads(x) if isinstance(x, str) and x else None for x in extra]
            more = pd.DataFrame.from_records([x if isinstance(x, dict) else {} for x in parsed], index=df.index)
            stored = set(df.columns) | (have if columns is not None or empty else set())  # a left-out column stays out
            more = more[[c for c in more.columns if c not in stored]]
            df = pd.concat([df, more], axis=1)
        return df.reindex(columns=wanted + sorted(set(df.columns) - set(RESULT_COLUMNS)))

    def _fewer_runs(self, run_ids: Iterable[str] | str | None) -> Iterable[str] | str | None:
        """``run_ids``, or None when they name every run that has results: a read of every row then scans the
        table in order instead of looking each run up by index and sorting a million rows back into order."""
        if run_ids is None or isinstance(run_ids, str):
            return run_ids
        ids = list(run_ids)
        (n_runs,) = self._conn.execute("SELECT count(*) FROM runs").fetchone()
        if len(set(ids)) < n_runs:  # some run left out (a sweep reading its own): no scan of the index for it
            return ids
        if ids and {r for (r,) in self._conn.execute("SELECT DISTINCT run_id FROM results")} <= set(ids):
            return None
        return ids

    def _empty_columns(self, columns: list[str], where: str, ids: list[str]) -> list[str]:
        """Those of ``columns`` that are NULL in every row the ``where`` clause selects: the columns with a value
        in the first rows are not counted (each column counted cost a million-row scan 40 ms)."""
        if not columns:
            return []
        first = self._conn.execute(f"SELECT {', '.join(columns)} FROM results {where} LIMIT 1000", ids).fetchall()
        maybe = [c for j, c in enumerate(columns) if all(row[j] is None for row in first)]
        if not maybe or not first:
            return maybe
        counts = self._conn.execute(f"SELECT {', '.join(f'count({c})' for c in maybe)} FROM results {where}",
                                    ids).fetchone()
        return [c for c, n in zip(maybe, counts, strict=True) if not n]

    def result_frames(self, run_ids: Iterable[str] | str | None = None,
                      rows_per_frame: int = 10_000) -> Iterator[pd.DataFrame]:
        """The rows of :meth:`results`, in order, as frames of at most ``rows_per_frame`` rows (at least one
        frame, perhaps empty), each with every column :meth:`results` would have (the extra fields of all
        the selected rows). Why: writing out a million rows (a CSV report) then holds one frame, not all.
        INTEGER columns come as pandas' nullable ``Int64``, so every frame writes a count the same way
        (``8``, never ``8.0`` because another frame had a gap)."""
        import pandas as pd

        where, ids = _run_filter(run_ids)
        with self._lock:
            keys = {k for (k,) in self._conn.execute(
                "SELECT DISTINCT j.key FROM results, json_each(CASE WHEN json_valid(results.extra) AND "
                f"json_type(results.extra) = 'object' THEN results.extra END) AS j {where}", ids)}
            cur = self._conn.execute(f"SELECT * FROM results {where} ORDER BY rowid", ids)
            names = [d[0] for d in cur.description]
        columns = list(RESULT_COLUMNS) + sorted(keys - set(RESULT_COLUMNS))
        first = True
        while True:
            with self._lock:
                batch = cur.fetchmany(rows_per_frame)
            if not batch and not first:
                return
            first = False
            df = pd.DataFrame.from_records(batch, columns=names, coerce_float=True)
            extra = df.pop("extra") if "extra" in df else None
            if extra is not None and extra.notna().any():
                parsed = [json.loads(x) if isinstance(x, str) and x else None for x in extra]
                more = pd.DataFrame.from_records([x if isinstance(x, dict) else {} for x in parsed], index=df.index)
                df = pd.concat([df, more[[c for c in more.columns if c not in df.columns]]], axis=1)
            df = df.reindex(columns=columns)
            for name, sql_type in RESULT_COLUMNS.items():
                col = df[name]
                if sql_type == "INTEGER" and col.dtype.kind in "if" and (
                        col.isna() | ((col % 1 == 0) & (col.abs() < 2.0**63))).all():
                    df[name] = col.astype("Int64")
            yield df
            if len(batch) < rows_per_frame:
                return

    def result_tuples(self, run_ids: Iterable[str] | str | None = None, quote_prefixes: Iterable[str] = (),
                      rows_per_batch: int = 10_000) -> tuple[list[str], Iterator[list[tuple[Any, ...]]]] | None:
        """(columns, batches of rows as tuples): the rows of :meth:`results` with every value converted by
        SQLite, so a CSV of a million rows goes from SQLite to the csv module without a frame per batch
        (about a third less time). A text value starting with one of ``quote_prefixes`` gets a leading ``'``
        (a CSV's defence against formulas); extra fields are taken out of ``extra`` (JSON true/false as
        True/False, as a frame writes them). None when an extra field is nested or oddly named: then
        :meth:`result_frames` writes them."""
        where, ids = _run_filter(run_ids)
        with self._lock:
            extras = self._conn.execute(
                "SELECT DISTINCT j.key, j.type FROM results, json_each(CASE WHEN json_valid(results.extra) AND "
                f"json_type(results.extra) = 'object' THEN results.extra END) AS j {where}", ids).fetchall()
            have = {r[1] for r in self._conn.execute("PRAGMA table_info(results)")}
        if any(t in ("object", "array") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) for k, t in extras):
            return None
        keys = sorted({k for k, _ in extras} - set(RESULT_COLUMNS))
        first = ", ".join("'" + p.replace("'", "''") + "'" for p in quote_prefixes)

        def quoted(expr: str) -> str:
            if not first:
                return expr
            return (f"CASE WHEN typeof({expr}) = 'text' AND substr({expr}, 1, 1) IN ({first}) "
                    f"THEN '''' || {expr} ELSE {expr} END")

        exprs = [quoted(k) if k in have else "NULL" for k in RESULT_COLUMNS]
        exprs += [quoted(f"CASE json_type(extra, '$.{k}') WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' "
                         f"ELSE json_extract(extra, '$.{k}') END") for k in keys]
        with self._lock:
            cur = self._conn.execute(f"SELECT {', '.join(exprs)} FROM results {where} ORDER BY rowid", ids)

        def batches() -> Iterator[list[tuple[Any, ...]]]:
            while True:
                with self._lock:
                    batch = cur.fetchmany(rows_per_batch)
                if not batch:
                    return
                yield batch

        return [*RESULT_COLUMNS, *keys], batches()

    # -- peaks -------------------------------------------------------------
    def set_peak(self, env_id: str, backend: str, metric: str, dtype: str, value: float, unit: str,
                 method: str, details: Mapping[str, Any] | None = None) -> None:
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO peaks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (env_id, backend, metric, dtype, float(value), unit, method, now_iso(),
                       json.dumps(details or {})))

    def peaks(self, env_id: str | None = None, backend: str | None = None) -> pd.DataFrame:
        sql, args = "SELECT * FROM peaks WHERE 1=1", []
        if env_id is not None:
            sql, args = sql + " AND env_id = ?", [*args, env_id]
        if backend is not None:
            sql, args = sql + " AND backend = ?", [*args, backend]
        import pandas as pd

        return pd.DataFrame(self._query(sql + " ORDER BY env_id, backend, metric, dtype", args),
                            columns=list(PEAK_COLUMNS))

    def peak_records(self, env_id: str, backend: str) -> list[dict[str, Any]]:
        """One machine's and backend's rows of the peaks table as dicts, without pandas: a sweep reads its
        ceilings before its first cell, and importing pandas for them cost a one-cell ``bench`` ~0.5 s."""
        return self._query("SELECT * FROM peaks WHERE env_id = ? AND backend = ? ORDER BY metric, dtype",
                           (env_id, backend))

    def peak_values(self, env_id: str, backend: str) -> dict[tuple[str, str], float]:
        """{(metric, dtype): value} for one machine and backend (what the harness needs for % of peak)."""
        rows = self._query("SELECT metric, dtype, value FROM peaks WHERE env_id = ? AND backend = ?",
                           (env_id, backend))
        return {(r["metric"], r["dtype"]): r["value"] for r in rows}

    # -- export / import ---------------------------------------------------
    def export(self, run_ids: Iterable[str] | str | None, path: str | os.PathLike) -> Path:
        """Write runs (None: all), their environments and peaks as one JSON document, atomically; a path that
        is this store or any other results store is refused before anything is read or written
        (:mod:`workbench.core.output_guard`)."""
        check_output_path(path, flag="export", stores=(self.path, default_store_path()), export=True)
        ids = [run_ids] if isinstance(run_ids, str) else (list(run_ids) if run_ids is not None else None)
        runs = self._query("SELECT * FROM runs ORDER BY created_at")
        if ids is not None:
            missing = set(ids) - {r["run_id"] for r in runs}
            if missing:
                raise ValueError(f"unknown run id(s) {sorted(missing)}; valid run ids: "
                                 f"{', '.join(r['run_id'] for r in runs) or '(none)'}")
            runs = [r for r in runs if r["run_id"] in ids]
        run_ids_out = [r["run_id"] for r in runs]
        where, params = _run_filter(run_ids_out)
        row_envs = {e for (e,) in self._conn.execute(f"SELECT DISTINCT env_id FROM results {where}", params) if e}
        env_ids = sorted({r["env_id"] for r in runs if r.get("env_id")} | row_envs)
        envs = []
        for e in env_ids:
            try:
                envs.append({"env_id": e, "record": self.environment(e)})
            except KeyError:
                pass
        peaks = [r for r in self._query("SELECT * FROM peaks") if r["env_id"] in env_ids]
        for p in peaks:
            p["details"] = json.loads(p["details"]) if p.get("details") else {}
        for r in runs:
            for k in ("spec", "argv"):
                r[k] = json.loads(r[k]) if r.get(k) else None
        head = json.dumps({"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": now_iso(),
                           "runs": runs, "environments": envs}, allow_nan=False, default=str)

        def pieces() -> Iterator[str]:
            """The document of ``json.dumps`` (the same text), its results written a batch of rows at a time."""
            yield head[:-1] + ', "results": ['
            sep = ""
            for batch in self.row_batches(run_ids_out):
                yield sep + ", ".join(json.dumps({k: _finite(v) for k, v in r.items()}, allow_nan=False, default=str)
                                      for r in batch)
                sep = ", "
            yield f'], "peaks": {json.dumps(peaks, allow_nan=False, default=str)}}}'

        return write_output(path, pieces(), flag="export", stores=(self.path, default_store_path()), export=True)

    def import_file(self, path: str | os.PathLike, validated: Mapping[str, Any] | None = None) -> dict[str, int]:
        """Merge another store's export. Existing records win, so importing twice adds nothing.

        Checked by meaning as well as by schema (:func:`workbench.store.import_schema.validate_export` for the file
        alone), against this store, before anything is written (one transaction: all or nothing):

        - a run id this store has with a different identity (created_at, name, suite, env_id, git_commit,
          spec, argv) is another run under the same id: refused;
        - a cell this store has (same run and cell_key) with a different median_s or status: refused;
        - a run marked ``running`` is imported as ``interrupted``, without its owner: no process here writes
          it, and ``bench --resume`` can finish it;
        - an env_id that neither the file nor this store describes gets a record saying so
          (``{"described": false, ...}``), so reports show an undescribed machine rather than nothing.

        Returns how many runs, environments, results and peaks were new. ``validated``: the document
        :func:`workbench.store.import_schema.load_export` already returned for ``path`` (not read again).
        """
        from workbench.store.import_schema import load_export

        # validated in full (types, sizes, depth, identifiers, contradictions) before anything is written
        doc = validated if validated is not None else load_export(path, export_format=EXPORT_FORMAT,
                                                                  export_version=EXPORT_VERSION)
        where = str(path)
        runs = [dict(r) for r in _records(doc, "runs") if r.get("run_id")]
        for r in runs:
            if r.get("status") == "running":
                r.update(status="interrupted", owner_pid=None, owner_host=None)
        envs = {str(e["env_id"]): e["record"] for e in _records(doc, "environments")
                if e.get("env_id") and isinstance(e.get("record"), dict)}
        streamed = getattr(doc.get("results"), "env_ids", None) is not None  # a large file, read row by row
        results: Iterable[dict[str, Any]] = (
            doc["results"] if streamed
            else [row for row in _records(doc, "results") if row.get("run_id") and row.get("cell_key")])
        row_envs = doc["results"].env_ids if streamed else {r["env_id"] for r in results if r.get("env_id")}
        added = {"runs": 0, "environments": 0, "results": 0, "peaks": 0}
        with self._write() as c:
            existing = self._conflicting_runs(c, runs, where)
            if existing:
                self._check_cells_agree(c, existing, results, where)
            known_envs = {r[0] for r in c.execute("SELECT env_id FROM environments")} | set(envs)
            for env_id in sorted(({r["env_id"] for r in runs if r.get("env_id")} | row_envs) - known_envs):
                envs[env_id] = {"environment_id": env_id, "described": False,
                                "note": f"imported from {Path(where).name} without a record of this environment"}
            before = c.total_changes
            c.executemany(f"INSERT OR IGNORE INTO runs ({', '.join(RUN_COLUMNS)}) "
                          f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
                          ([_jsonable(r.get(k)) for k in RUN_COLUMNS] for r in runs))
            added["runs"] = c.total_changes - before
            before = c.total_changes
            stamp = now_iso()
            c.executemany("INSERT OR IGNORE INTO environments VALUES (?, ?, ?)",
                          ((k, json.dumps(v), stamp) for k, v in envs.items()))
            added["environments"] = c.total_changes - before
            added["results"] = _insert_new_rows(c, results)
            before = c.total_changes
            c.executemany("INSERT OR IGNORE INTO peaks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          ([_jsonable(p.get(k)) for k in PEAK_COLUMNS] for p in _records(doc, "peaks")
                           if all(p.get(k) for k in ("env_id", "backend", "metric"))
                           and isinstance(p.get("value"), (int, float))))
            added["peaks"] = c.total_changes - before
        self.checkpoint()  # every imported row in the main file, the -wal emptied, once the import commits
        return added

    #: What makes a run that run: an import may not give these another value under the same run id.
    RUN_IDENTITY = ("created_at", "name", "suite", "env_id", "git_commit", "spec", "argv")
    #: What an imported cell may not contradict in a cell this store already has.
    CELL_IDENTITY = ("status", "median_s")

    def _conflicting_runs(self, c: sqlite3.Connection, runs: list[dict[str, Any]], where: str) -> set[str]:
        """The file's run ids this store already has, each checked to be the same run (else ValueError)."""
        ids = [r["run_id"] for r in runs]
        have: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            cur = c.execute(f"SELECT {', '.join(('run_id', *self.RUN_IDENTITY))} FROM runs "
                            f"WHERE run_id IN ({', '.join('?' * len(chunk))})", chunk)
            for rec in cur.fetchall():
                have[rec[0]] = dict(zip(self.RUN_IDENTITY, rec[1:], strict=True))
        for r in runs:
            old = have.get(r["run_id"])
            if old is None:
                continue
            for k in ("spec", "argv"):
                old[k] = json.loads(old[k]) if old.get(k) else None
            for k in self.RUN_IDENTITY:
                mine, theirs = old.get(k), r.get(k)
                if k == "argv":
                    mine, theirs = mine or None, theirs or None  # [] and null both say "not recorded"
                if mine != theirs:
                    raise ValueError(f"{where}: run {r['run_id']!r} is already in {self.path} with a different {k} "
                                     f"({str(mine)[:60]!r} here, {str(theirs)[:60]!r} in the file): it is another "
                                     "run under the same id; nothing was imported")
        return set(have)

    def _check_cells_agree(self, c: sqlite3.Connection, run_ids: set[str], results: Iterable[dict[str, Any]],
                           where: str) -> None:
        """Rows of runs this store already has must not contradict its cells (else ValueError). The stored
        cells are looked up, the file's rows read once (a streamed file is not held in memory)."""
        stored: dict[tuple[str, str], tuple[Any, ...]] = {}
        for run_id in run_ids:
            for key, *values in c.execute(
                    f"SELECT cell_key, {', '.join(self.CELL_IDENTITY)} FROM results WHERE run_id = ?", (run_id,)):
                stored[run_id, key] = tuple(values)
        for i, row in enumerate(results):
            old = stored.get((row["run_id"], row["cell_key"]))
            if old is None:
                continue
            for k, mine in zip(self.CELL_IDENTITY, old, strict=True):
                theirs = row.get(k)
                if mine != theirs:
                    raise ValueError(f"{where}: results[{i}]: cell {row['cell_key']!r} of run {row['run_id']!r} is "
                                     f"already in {self.path} with {k} {mine!r}, the file says {theirs!r}: a cell "
                                     "has one result; nothing was imported")


_COLUMN_INDEX = {k: i for i, k in enumerate(RESULT_COLUMNS)}
def _insert_new_rows(c: sqlite3.Connection, rows: Iterable[Mapping[str, Any]]) -> int:
    """``INSERT OR IGNORE`` every row, in file order; returns how many were new. Each row binds only the
    columns it holds a value in (:func:`workbench.store.import_stream.present_values`), consecutive rows with the
    same columns in one ``executemany``; a streamed export's rows come already converted (its spool)."""
    before = c.total_changes
    spooled = getattr(rows, "value_batches", None)
    for cols, batch in (spooled() if spooled is not None else value_batches(rows)):
        c.executemany(f"INSERT OR IGNORE INTO results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                      batch)
    return c.total_changes - before


#: Rows read from SQLite per frame before their repeated strings are shared (:func:`share_strings`).
RESULT_CHUNK_ROWS = 50_000


def _joined(chunks: list[pd.DataFrame]) -> pd.DataFrame:
    """Frames read in chunks as one frame with the dtypes one read would have given: a chunk whose numeric
    column was NULL throughout reads it as object (None), which would make the joined column object too."""
    import pandas as pd

    if len(chunks) == 1:
        return chunks[0]
    df = pd.concat(chunks, ignore_index=True)
    for name in df.columns:
        col = df[name]
        if col.dtype == object and any(c[name].dtype.kind in "iuf" for c in chunks):
            try:
                df[name] = pd.to_numeric(col)
            except (TypeError, ValueError):  # text in a numeric column (an odd import): left as read
                pass
    return df


def _run_filter(run_ids: Iterable[str] | str | None) -> tuple[str, list[str]]:
    """(``WHERE`` clause, parameters) selecting the results of ``run_ids`` (None: every run; []: none)."""
    if run_ids is None:
        return "", []
    ids = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    return (f"WHERE run_id IN ({', '.join('?' * len(ids))})" if ids else "WHERE 0"), ids


def _records(doc: Mapping[str, Any], key: str) -> Iterator[dict[str, Any]]:
    items = doc.get(key) or []
    if not isinstance(items, list):
        raise ValueError(f"export field {key!r} must be a list")
    return (x for x in items if isinstance(x, dict))


def open_store(store: Store | str | os.PathLike | None, must_exist: bool = False,
               read_only: bool | None = None, verify: bool = True) -> Store:
    """A Store from a Store, a path, or None (``$WORKBENCH_STORE`` or ./workbench-results.sqlite).

    ``must_exist`` is for readers: a mistyped path raises FileNotFoundError instead
    of creating an empty store, and the store is opened read-only (unless ``read_only`` says otherwise).
    """
    if isinstance(store, Store):
        return store
    if store is not None and not str(store).strip():
        raise StoreError("the store path is empty; give a file such as results.sqlite")
    path = Path(store) if store is not None else default_store_path()
    if must_exist and not path.exists():
        raise FileNotFoundError(f"no results store at {path} (run `workbench bench` first, or pass --store)")
    return Store(path, read_only=must_exist if read_only is None else read_only, verify=verify)


#: A run owned by a process on another host counts as abandoned when its last row is older than this.
HEARTBEAT_STALE_S = 15 * 60.0


def _started_after(pid: int, stamp: str | None) -> bool:
    """Process ``pid`` started after ``stamp`` (so it is a new process that reused a dead owner's pid)."""
    try:
        import psutil

        return psutil.Process(pid).create_time() > time.time() - _age_s(stamp) + 1.0
    except Exception:  # noqa: BLE001 - unknown: assume it is the owner
        return False


def _age_s(stamp: str | None) -> float:
    if not stamp:
        return math.inf
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return math.inf
    return (datetime.now(timezone.utc) - t).total_seconds()

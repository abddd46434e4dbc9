"""Runs in the store: their ids and names, their lifecycle (running, finished, interrupted), the process that
owns one while it writes, and which run ``--resume`` picks.

Why owners: two processes resuming one run would measure its cells twice; a run records the host and pid
that writes it and a heartbeat with every row, so a live owner's run is never taken over, and a dead one's is.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.processes import pid_alive
from workbench.core.record import JsonObject
from workbench.core.timestamps import now_iso
from workbench.store.connection import StoreConnection
from workbench.store.errors import StoreError
from workbench.store.schema import RUN_COLUMNS, RUN_STATUSES
from workbench.store.stored_text import stored_json
from workbench.version import __version__

if TYPE_CHECKING:  # pandas costs ~0.25 s and 45 MB a process; loaded only to return a table
    import pandas as pd

#: New run ids drawn before giving up when each is taken already.
RUN_ID_TRIES = 8
#: Longest run name: it is shown in tables and report titles, and an export of the run must import again.
MAX_RUN_NAME_CHARS = 256
_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f]")
#: A run owned by a process on another host counts as abandoned when its last row is older than this.
HEARTBEAT_STALE_S = 15 * 60.0


def new_run_id() -> str:
    """Sortable by time and unique across machines: ``20261122T015700Z-3f9a1c``."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def git_commit() -> str | None:
    """The commit of the workbench checkout, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5)
        return (out.stdout.strip() or None) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


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


class RunRecords(StoreConnection):
    """The ``runs`` table: creating runs, their status, the cell in flight, and who owns each."""

    def new_run(self, *, name: str | None = None, suite: str | None = None, argv: list[str] | None = None,
                env_id: str | None = None, spec: Mapping[str, Any] | None = None, tag: str | None = None,
                code_commits: Sequence[Mapping[str, Any]] | None = None) -> str:
        """A new run, marked running. ``tag``: free text to find the run by (``bench --tag``);
        ``code_commits``: the commit and dirty state of each catalog folder it measures
        (:func:`workbench.history.provenance.code_commits`)."""
        check_run_name(name)
        check_run_name(tag, flag="tag")
        commits = None if code_commits is None else json.dumps(stored_json([dict(c) for c in code_commits]))
        for attempt in range(RUN_ID_TRIES):  # ids share their second: 400 runs made in one drew the same one
            run_id = new_run_id()
            try:
                with self._write() as c:
                    c.execute("INSERT INTO runs (run_id, created_at, name, suite, argv, env_id, status, git_commit, "
                              "spec, tag, workbench_version, code_commits) "
                              "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
                              (run_id, now_iso(), name, suite, json.dumps(argv or []), env_id, git_commit(),
                               json.dumps(spec) if spec is not None else None, tag, __version__,
                               commits))
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

    def in_flight(self, run_id: str) -> JsonObject | None:
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

    def run(self, run_id: str) -> JsonObject:
        """One run's record (``spec`` and ``argv`` decoded from JSON); unknown ids raise ValueError."""
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            known = [r["run_id"] for r in self._query("SELECT run_id FROM runs ORDER BY created_at")]
            raise ValueError(f"unknown run id {run_id!r}; runs in {self.path}: {', '.join(known) or '(none)'}")
        return decoded_run(rows[0])

    def latest_run_id(self, unfinished: bool = False) -> str | None:
        """The newest run (by creation time, then id): what "latest" means for every command. ``unfinished``:
        the newest run not finished and not being written by a live process (what ``--resume`` picks)."""
        where = "WHERE status != 'finished'" if unfinished else ""
        rows = self._query(f"SELECT run_id FROM runs {where} ORDER BY created_at DESC, run_id DESC")
        for r in rows:
            if not unfinished or self.live_owner(r["run_id"]) is None:
                return r["run_id"]
        return None

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


def decoded_run(stored: Mapping[str, Any]) -> JsonObject:
    """A row of the runs table with its JSON text columns (``spec``, ``argv``, ``code_commits``) decoded
    (empty: None; a store from before ``code_commits`` has no such key, and gets none)."""
    rec = dict(stored)
    for k in ("spec", "argv", "code_commits"):
        if k in rec or k != "code_commits":
            text = rec.get(k)
            rec[k] = json.loads(text) if isinstance(text, str) and text else (text or None)
    if rec.get("code_commits") is not None:  # a store written before they were cleaned exports importable ones
        rec["code_commits"] = stored_json(rec["code_commits"])
    return rec


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

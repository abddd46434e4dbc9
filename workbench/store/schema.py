"""The store's tables and where the store lives: what every other part of the store writes into.

One statement of the columns (:data:`RUN_COLUMNS`, :data:`PEAK_COLUMNS`, and the measurement record's
:data:`~workbench.core.record.RESULT_COLUMNS`) makes the tables, adds the columns an older store lacks, and
writes and reads exports, so the three never disagree.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from workbench.core.record import RESULT_COLUMNS

ENV_STORE = "WORKBENCH_STORE"
DEFAULT_STORE_NAME = "workbench-results.sqlite"
EXPORT_FORMAT = "workbench-results"
EXPORT_VERSION = 1
RUN_STATUSES = ("running", "finished", "interrupted")

RUN_COLUMNS: dict[str, str] = {
    "run_id": "TEXT PRIMARY KEY", "created_at": "TEXT", "finished_at": "TEXT", "name": "TEXT", "suite": "TEXT",
    "argv": "TEXT", "env_id": "TEXT", "status": "TEXT", "git_commit": "TEXT", "spec": "TEXT", "wall_s": "REAL",
    # JSON {cell_key, label, started_at} of the cell running now, written before it runs: a run that died
    # in it (a crash without process isolation, a kill) shows which cell to blame on --resume.
    "in_flight": "TEXT",
    # The process writing the run (host, pid) and when it last stored a row: a live owner's run is never
    # resumed by another process.
    "owner_host": "TEXT", "owner_pid": "INTEGER", "heartbeat_at": "TEXT",
    # What the run measured, for its place on a history (issue 41): a free tag (``bench --tag``), the
    # workbench's version, and JSON [{catalog, repo, commit, dirty} or {catalog, reason}] per catalog folder.
    # A store from before them gets the columns (empty) when opened for writing; read-only, it reads as it is.
    "tag": "TEXT", "workbench_version": "TEXT", "code_commits": "TEXT",
}
PEAK_COLUMNS: dict[str, str] = {
    "env_id": "TEXT", "backend": "TEXT", "metric": "TEXT", "dtype": "TEXT", "value": "REAL", "unit": "TEXT",
    "method": "TEXT", "measured_at": "TEXT", "details": "TEXT",
}

SCHEMA = f"""
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


def create_tables(c: sqlite3.Connection) -> None:
    """The tables a store lacks, and the columns an older workbench's store lacks (empty), instead of failing."""
    for stmt in filter(None, (s.strip() for s in SCHEMA.split(";"))):
        c.execute(stmt)
    have = {r[1] for r in c.execute("PRAGMA table_info(results)")}
    for name, typ in RESULT_COLUMNS.items():
        if name not in have:
            c.execute(f"ALTER TABLE results ADD COLUMN {name} {typ}")
    have = {r[1] for r in c.execute("PRAGMA table_info(runs)")}
    for name, typ in RUN_COLUMNS.items():
        if name not in have:
            c.execute(f"ALTER TABLE runs ADD COLUMN {name} {typ.replace(' PRIMARY KEY', '')}")
    c.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(EXPORT_VERSION),))

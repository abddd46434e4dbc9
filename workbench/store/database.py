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

:class:`Store` is made of one part per job, each in its own module: the connection
(:mod:`~workbench.store.connection`), runs (:mod:`~workbench.store.runs`), result rows
(:mod:`~workbench.store.rows`), environments and peaks (:mod:`~workbench.store.machines`),
export and import (:mod:`~workbench.store.exchange`) and health checks (:mod:`~workbench.store.health`).
This module puts them together and keeps the store's names in one place for its callers.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from workbench.core.record import RESULT_COLUMNS
from workbench.core.timestamps import now_iso
from workbench.store.connection import CHECKPOINT_EVERY_ROWS, CHECKPOINT_EVERY_S, log
from workbench.store.errors import StoreError, damaged_store_message, describe_sqlite_error
from workbench.store.exchange import StoreExchange
from workbench.store.health import HealthChecks
from workbench.store.machines import MachineRecords, current_environment
from workbench.store.rows import RESULT_CHUNK_ROWS, ResultRows
from workbench.store.runs import (
    HEARTBEAT_STALE_S,
    MAX_RUN_NAME_CHARS,
    RUN_ID_TRIES,
    RunRecords,
    check_run_name,
    git_commit,
    new_run_id,
)
from workbench.store.schema import (
    DEFAULT_STORE_NAME,
    ENV_STORE,
    EXPORT_FORMAT,
    EXPORT_VERSION,
    PEAK_COLUMNS,
    RUN_COLUMNS,
    RUN_STATUSES,
    default_store_path,
)

__all__ = [
    "CHECKPOINT_EVERY_ROWS", "CHECKPOINT_EVERY_S", "DEFAULT_STORE_NAME", "ENV_STORE", "EXPORT_FORMAT",
    "EXPORT_VERSION", "HEARTBEAT_STALE_S", "MAX_RUN_NAME_CHARS", "PEAK_COLUMNS", "RESULT_CHUNK_ROWS",
    "RESULT_COLUMNS", "RUN_COLUMNS", "RUN_ID_TRIES", "RUN_STATUSES", "Store", "StoreError", "check_run_name",
    "current_environment", "damaged_store_message", "default_store_path", "describe_sqlite_error", "git_commit",
    "log", "new_run_id", "now_iso", "open_store",
]


class Store(HealthChecks, StoreExchange, RunRecords, ResultRows, MachineRecords):
    """A results store at ``path`` (created when missing). Safe to share between threads and processes.

    ``read_only``: for commands that only read (``runs``, ``report``, ``export``, ``compare``): the file
    must exist, is opened without writing anything (an immutable file or a read-only mount still lists),
    and an older store is read as it is, without adding columns.
    """

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection itself, for readers that stream many rows as tuples (a history of 1,000 runs
        reads 100,000); writes go through the store's methods."""
        return self._conn


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

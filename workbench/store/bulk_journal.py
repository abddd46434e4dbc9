"""A store created by a large import is written once, through a rollback journal, not twice through the WAL.

Why: in WAL mode every page of an import is written to the ``-wal`` file and then copied into the store by the
checkpoint; a million real rows are 5 GB, written twice. With a rollback journal, SQLite journals only the
pages that held something before the transaction: the pages a new store gains are written once, into the
store itself. The transaction is as atomic either way (a failed import rolls back; a store the import
created is removed again). Only for a store this import created (nobody else reads it yet: in rollback mode
a reader waits while the import holds its lock); WAL is restored after, as every other store has it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from workbench.store.connection import log


@contextmanager
def rollback_journal(conn: sqlite3.Connection, enabled: bool = True) -> Iterator[bool]:
    """Inside: ``conn`` in ``journal_mode = DELETE`` when ``enabled`` and SQLite allows it (another connection
    holding the store keeps it in WAL); yields whether it is. After: WAL again (a failure to switch back is
    logged: the next connection that writes sets WAL on opening)."""
    switched = False
    if enabled:
        try:
            switched = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        except sqlite3.OperationalError as exc:  # busy: another connection has it open in WAL
            log.info("import stays in WAL mode: %s", exc)
    try:
        yield switched
    finally:
        if switched:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as exc:
                log.info("journal mode not set back to WAL: %s", exc)

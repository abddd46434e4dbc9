"""The results store: runs, rows, environments, import/export and health, in one SQLite file.

``from workbench.store import ...`` keeps the names of the
former module ``workbench.store`` (now ``workbench.store.database``).
"""

from __future__ import annotations

from workbench.store.database import (  # noqa: F401
    CHECKPOINT_EVERY_ROWS,
    CHECKPOINT_EVERY_S,
    DEFAULT_STORE_NAME,
    ENV_STORE,
    EXPORT_FORMAT,
    EXPORT_VERSION,
    HEARTBEAT_STALE_S,
    MAX_RUN_NAME_CHARS,
    PEAK_COLUMNS,
    RESULT_CHUNK_ROWS,
    RUN_COLUMNS,
    RUN_ID_TRIES,
    RUN_STATUSES,
    Store,
    StoreError,
    check_run_name,
    current_environment,
    damaged_store_message,
    default_store_path,
    describe_sqlite_error,
    git_commit,
    log,
    new_run_id,
    open_store,
)

__all__ = [
    'log', 'ENV_STORE', 'DEFAULT_STORE_NAME', 'EXPORT_FORMAT', 'EXPORT_VERSION', 'RUN_STATUSES',
    'CHECKPOINT_EVERY_ROWS', 'CHECKPOINT_EVERY_S', 'RUN_COLUMNS', 'PEAK_COLUMNS', 'default_store_path',
    'RUN_ID_TRIES', 'new_run_id', 'current_environment', 'git_commit', 'describe_sqlite_error',
    'MAX_RUN_NAME_CHARS', 'check_run_name', 'damaged_store_message', 'StoreError', 'Store',
    'RESULT_CHUNK_ROWS', 'open_store', 'HEARTBEAT_STALE_S',
]

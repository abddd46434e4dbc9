"""What the store knows about each machine (an ``env_id``): its environment record and its measured peaks.

Rows and runs name their machine by ``env_id`` only; the record of what that machine is (collected once per
process, :func:`current_environment`) and the ceilings measured on it are kept once, shared by every run.
"""

from __future__ import annotations

import json
import logging
import os
import platform
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workbench.core.record import JsonObject, RowDict
from workbench.core.timestamps import now_iso
from workbench.store.connection import StoreConnection
from workbench.store.schema import PEAK_COLUMNS

if TYPE_CHECKING:  # pandas costs ~0.25 s and 45 MB a process; loaded only to return a table
    import pandas as pd

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def current_environment() -> tuple[str, JsonObject]:
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


class MachineRecords(StoreConnection):
    """The ``environments`` and ``peaks`` tables."""

    # -- environments ------------------------------------------------------
    def add_environment(self, env_id: str, record: Mapping[str, Any]) -> None:
        with self._write() as c:
            c.execute("INSERT OR IGNORE INTO environments VALUES (?, ?, ?)",
                      (env_id, json.dumps(record, default=str), now_iso()))

    def environment(self, env_id: str) -> JsonObject:
        rows = self._query("SELECT record FROM environments WHERE env_id = ?", (env_id,))
        if not rows:
            raise KeyError(f"no environment {env_id!r} in {self.path}")
        return json.loads(rows[0]["record"])

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

    def peak_records(self, env_id: str, backend: str) -> list[RowDict]:
        """One machine's and backend's rows of the peaks table as dicts, without pandas: a sweep reads its
        ceilings before its first cell, and importing pandas for them cost a one-cell ``bench`` ~0.5 s."""
        return self._query("SELECT * FROM peaks WHERE env_id = ? AND backend = ? ORDER BY metric, dtype",
                           (env_id, backend))

    def peak_values(self, env_id: str, backend: str) -> dict[tuple[str, str], float]:
        """{(metric, dtype): value} for one machine and backend (what the harness needs for % of peak)."""
        rows = self._query("SELECT metric, dtype, value FROM peaks WHERE env_id = ? AND backend = ?",
                           (env_id, backend))
        return {(r["metric"], r["dtype"]): r["value"] for r in rows}

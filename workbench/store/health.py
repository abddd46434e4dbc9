"""``workbench store check``: what is wrong with a store, each problem in words with what to do about it.

Why a check of its own: a kill, a lost ``-wal`` file or a damaged disk leaves a store that still opens; the
check names the run that is short of cells, the run nobody writes any more, and damaged pages, so the user
can resume, drop or restore instead of trusting a report built on what is left.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from workbench.core.record import RESULT_COLUMNS
from workbench.core.status import Status
from workbench.store.connection import schema_version_problem
from workbench.store.runs import RunRecords
from workbench.store.schema import RUN_STATUSES

log = logging.getLogger(__name__)

#: Result columns stored as JSON text (the other text columns are plain text).
JSON_RESULT_COLUMNS = ("params", "samples_s", "host_samples_s", "round_medians_s", "round_ids", "extra")

#: ``planned(run)``: (cells, rounds) of a run's stored sweep plan (the caller rebuilds the sweep).
PlannedCells = Callable[[Mapping[str, Any]], tuple[int, int]]


class HealthChecks(RunRecords):
    """The integrity and content checks of a store."""

    def check(self, planned: PlannedCells | None = None) -> list[str]:
        """Problems found in the store, each in words with what to do ([] when healthy): SQLite's integrity
        check, rows of unknown runs, runs marked running that no live process writes, unreadable JSON, and
        a write-ahead log not yet moved into the main file.
        ``planned(run)``: (cells, rounds) the run's stored sweep plans, so that an interrupted run's missing
        cells are counted (the caller rebuilds the sweep: the store does not know sweeps)."""
        version = self._schema_version_problem()
        if version:  # said first; the checks below still run
            return [f"{version}; nothing will be written to it by this workbench",
                    *self._integrity_and_content(planned)]
        return self._integrity_and_content(planned)

    def _integrity_and_content(self, planned: PlannedCells | None) -> list[str]:
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

    def _schema_version_problem(self) -> str | None:
        try:
            found = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:
            return None
        return schema_version_problem(found[0] if found else None)

    def _content_problems(self, planned: PlannedCells | None) -> list[str]:
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
        for where, what in self.damaged_values(limit=1, numbers_only=True):
            problems.append(f"result fields hold text where a number belongs (the first found: {where} holds "
                            f"{what}); a report of their runs fails: drop the run or restore it from an export")
        return problems + self._wal_problems()

    def damaged_values(self, limit: int = 3, numbers_only: bool = False) -> list[tuple[str, str]]:
        """Up to ``limit`` stored result fields that cannot be what their column holds, as (where, what): text
        or bytes in a column of numbers, text that is not JSON in a JSON column (``numbers_only``: the first
        kind alone). Why: a report over a row whose ``median_s`` held 'abc' failed with "could not convert
        string to float: 'abc'", naming no store, run or column. One scan of the table: it is read when a
        command has failed, and by ``store check``."""
        have = {r[1] for r in self._conn.execute("PRAGMA table_info(results)")}
        numbers = [c for c, kind in RESULT_COLUMNS.items() if kind in ("REAL", "INTEGER") and c in have]
        texts = [] if numbers_only else [c for c in JSON_RESULT_COLUMNS if c in have]
        tests = [f"typeof({c}) IN ('text', 'blob')" for c in numbers]
        tests += [f"({c} IS NOT NULL AND NOT json_valid({c}))" for c in texts]
        if not tests:
            return []
        cols = [*numbers, *texts]
        found = []
        query = (f"SELECT run_id, kernel, variant, backend, {', '.join(cols)} FROM results "
                 f"WHERE {' OR '.join(tests)} LIMIT ?")
        for run_id, kernel, variant, backend, *values in self._conn.execute(query, (limit,)):
            for col, value in zip(cols, values, strict=True):
                if col in numbers and isinstance(value, (str, bytes)):
                    what = f"{_shown(value)}, not a number"
                elif col in texts and value is not None and not _is_json(value):
                    what = f"{_shown(value)}, not JSON"
                else:
                    continue
                found.append((f"run {run_id}'s row of {kernel}/{variant} on {backend}: its {col}", what))
        return found[:limit]

    def _wal_problems(self) -> list[str]:
        """A write-ahead log a checkpoint cannot empty (a reader holds it): the main file alone lacks rows."""
        wal = Path(f"{self.path}-wal")
        if wal.exists() and wal.stat().st_size > 0 and not self.read_only:
            self.checkpoint()
            if wal.stat().st_size > 0:
                return [f"{wal} still holds {wal.stat().st_size} bytes not in {self.path.name} (a reader may be "
                        "open): copy both files together"]
        return []

    def _shortfall(self, run: Mapping[str, Any], planned: PlannedCells | None) -> str:
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


def _shown(value: str | bytes) -> str:
    """A stored value as a message shows it: quoted, at most 40 characters."""
    text = repr(value if len(value) <= 40 else value[:40])
    return text if len(value) <= 40 else f"{text}… ({len(value):,} long)"


def _is_json(value: Any) -> bool:
    try:
        json.loads(value)
    except (ValueError, TypeError, RecursionError):
        return False
    return True

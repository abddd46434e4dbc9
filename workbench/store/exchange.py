"""Moving runs between stores: :meth:`StoreExchange.export` writes runs as one JSON document, and
:meth:`StoreExchange.import_file` merges such a document from another machine into this store.

An import is checked by meaning as well as by schema before anything is written, and written in one
transaction: a file that contradicts this store (another run under a known id, another result for a known
cell) changes nothing, and importing a file twice adds nothing the second time.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.output_guard import check_output_path, write_output
from workbench.core.record import Json, JsonObject, RowValue
from workbench.core.timestamps import now_iso
from workbench.store.bulk_journal import rollback_journal
from workbench.store.import_stream import ROW_INDEX, insert_groups, stored_value, value_batches
from workbench.store.machines import MachineRecords
from workbench.store.plain_rows import FieldGroup
from workbench.store.rows import ResultRows, run_filter
from workbench.store.runs import decoded_run
from workbench.store.schema import EXPORT_FORMAT, EXPORT_VERSION, PEAK_COLUMNS, RUN_COLUMNS, default_store_path


@dataclass
class IncomingExport:
    """What an import writes, taken out of a validated export document."""

    runs: list[JsonObject]
    #: env_id -> its environment record.
    environments: dict[str, JsonObject]
    #: The result rows with a run and a cell (none for a large file: its rows went in as they were checked).
    results: Iterable[Mapping[str, Json]]
    #: The environments the rows name.
    row_env_ids: set[str]
    peaks: list[JsonObject]

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> IncomingExport:
        """A run marked ``running`` comes in as ``interrupted``, without its owner: no process here writes it."""
        runs = [dict(r) for r in _records(doc, "runs") if r.get("run_id")]
        for r in runs:
            if r.get("status") == "running":
                r.update(status="interrupted", owner_pid=None, owner_host=None)
        envs = {str(e["env_id"]): e["record"] for e in _records(doc, "environments")
                if e.get("env_id") and isinstance(e.get("record"), dict)}
        streamed = getattr(doc.get("results"), "env_ids", None) is not None  # a large file: its rows are in
        results: Iterable[Mapping[str, Json]] = (
            [] if streamed
            else [row for row in _records(doc, "results") if row.get("run_id") and row.get("cell_key")])
        row_envs = doc["results"].env_ids if streamed else {r["env_id"] for r in results if r.get("env_id")}
        return cls(runs, envs, results, row_envs, list(_records(doc, "peaks")))


class StoreExchange(ResultRows, MachineRecords):
    """Export to and import from the JSON document of ``workbench export``."""

    #: What makes a run that run: an import may not give these another value under the same run id.
    RUN_IDENTITY = ("created_at", "name", "suite", "env_id", "git_commit", "spec", "argv")
    #: What an imported cell may not contradict in a cell this store already has.
    CELL_IDENTITY = ("status", "median_s")

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
        where, params = run_filter(run_ids_out)
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
        head = json.dumps({"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": now_iso(),
                           "runs": [decoded_run(r) for r in runs], "environments": envs},
                          allow_nan=False, default=str)

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

    def import_file(self, path: str | os.PathLike, validated: Mapping[str, Any] | None = None,
                    new_store: bool = False) -> dict[str, int]:
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
        ``new_store``: this store was created for this import (a large file's rows are then written through a
        rollback journal: :func:`workbench.store.bulk_journal.rollback_journal`).
        """
        from workbench.store.import_schema import is_streamed, load_export

        if validated is None and is_streamed(path):
            return self._import_streamed(path, new_store)
        # validated in full (types, sizes, depth, identifiers, contradictions) before anything is written
        doc = validated if validated is not None else load_export(path, export_format=EXPORT_FORMAT,
                                                                  export_version=EXPORT_VERSION)
        where = str(path)
        incoming = IncomingExport.of(doc)
        with self._write() as c:
            existing = self._conflicting_runs(c, incoming.runs, where)
            if existing:
                self._check_cells_agree(c, existing, incoming.results, where)
            added = self._insert_checked(c, incoming, where)
        self.checkpoint()  # every imported row in the main file, the -wal emptied, once the import commits
        return added

    def _insert_checked(self, c: sqlite3.Connection, incoming: IncomingExport, where: str) -> dict[str, int]:
        """:func:`_insert_new` of a checked export, each environment its rows or runs name and neither the
        file nor this store describes recorded as undescribed."""
        known_envs = {r[0] for r in c.execute("SELECT env_id FROM environments")} | set(incoming.environments)
        named = {r["env_id"] for r in incoming.runs if r.get("env_id")} | incoming.row_env_ids
        for env_id in sorted(named - known_envs):
            incoming.environments[env_id] = {
                "environment_id": env_id, "described": False,
                "note": f"imported from {Path(where).name} without a record of this environment"}
        return _insert_new(c, incoming)

    def _import_streamed(self, path: str | os.PathLike, new_store: bool = False) -> dict[str, int]:
        """:meth:`import_file` of a large file, read once: each checked batch of rows is inserted as it
        comes, inside one write transaction that any failed check (a later row, the runs, a repeat, a cell or
        run that contradicts this store) rolls back, so nothing is written unless the whole file passes."""
        from workbench.store.import_schema import load_export

        where = str(path)
        with rollback_journal(self._conn, enabled=new_store), self._write() as c:
            writer = _RowWriter(self, c, where)
            try:
                doc = load_export(path, export_format=EXPORT_FORMAT, export_version=EXPORT_VERSION, sink=writer)
            except BaseException:  # the batch in flight ends before the rollback; the first error is the one said
                writer.finish(raise_error=False)
                raise
            writer.finish()  # every row in before anything else uses the connection
            incoming = IncomingExport.of(doc)
            self._conflicting_runs(c, incoming.runs, where)
            added = self._insert_checked(c, incoming, where)
            added["results"] = writer.added
        self.checkpoint()
        return added

    def _conflicting_runs(self, c: sqlite3.Connection, runs: list[JsonObject], where: str) -> set[str]:
        """The file's run ids this store already has, each checked to be the same run (else ValueError)."""
        ids = [r["run_id"] for r in runs]
        have: dict[str, JsonObject] = {}
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
            old = decoded_run(old)
            for k in self.RUN_IDENTITY:
                mine, theirs = old.get(k), r.get(k)
                if k == "argv":
                    mine, theirs = mine or None, theirs or None  # [] and null both say "not recorded"
                if mine != theirs:
                    raise ValueError(f"{where}: run {r['run_id']!r} is already in {self.path} with a different {k} "
                                     f"({str(mine)[:60]!r} here, {str(theirs)[:60]!r} in the file): it is another "
                                     "run under the same id; nothing was imported")
        return set(have)

    def _check_cells_agree(self, c: sqlite3.Connection, run_ids: set[str], results: Iterable[Mapping[str, Json]],
                           where: str) -> None:
        """Rows of runs this store already has must not contradict its cells (else ValueError). The stored
        cells are looked up, the file's rows read once."""
        self._check_rows_agree(self._stored_cells(c, run_ids), enumerate(results), where)

    def _stored_cells(self, c: sqlite3.Connection, run_ids: Iterable[str],
                      below_rowid: int | None = None) -> dict[tuple[str, str], tuple[RowValue, ...]]:
        """(run, cell) -> :attr:`CELL_IDENTITY` of the stored rows of ``run_ids`` (those before ``below_rowid``
        only: the rows stored before an import that is still writing)."""
        stored: dict[tuple[str, str], tuple[RowValue, ...]] = {}
        below = "" if below_rowid is None else f" AND rowid < {int(below_rowid)}"
        for run_id in run_ids:
            for key, *values in c.execute(
                    f"SELECT cell_key, {', '.join(self.CELL_IDENTITY)} FROM results WHERE run_id = ?{below}",
                    (run_id,)):
                stored[run_id, key] = tuple(values)
        return stored

    def _check_rows_agree(self, stored: Mapping[tuple[str, str], tuple[RowValue, ...]],
                          results: Iterable[tuple[int, Mapping[str, Json]]], where: str) -> None:
        """Each (place in the file, row) against the stored cell it names, if any (else ValueError)."""
        for i, row in results:
            old = stored.get((row["run_id"], row["cell_key"]))
            if old is None:
                continue
            for k, mine in zip(self.CELL_IDENTITY, old, strict=True):
                theirs = row.get(k)
                if mine != theirs:
                    raise ValueError(f"{where}: results[{i}]: cell {row['cell_key']!r} of run {row['run_id']!r} is "
                                     f"already in {self.path} with {k} {mine!r}, the file says {theirs!r}: a cell "
                                     "has one result; nothing was imported")


def _insert_new(c: sqlite3.Connection, incoming: IncomingExport) -> dict[str, int]:
    """``INSERT OR IGNORE`` of everything ``incoming`` holds; how many runs, environments, results and peaks
    were new."""
    added = {"runs": 0, "environments": 0, "results": 0, "peaks": 0}
    before = c.total_changes
    c.executemany(f"INSERT OR IGNORE INTO runs ({', '.join(RUN_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
                  ([stored_value(r.get(k)) for k in RUN_COLUMNS] for r in incoming.runs))
    added["runs"] = c.total_changes - before
    before = c.total_changes
    stamp = now_iso()
    c.executemany("INSERT OR IGNORE INTO environments VALUES (?, ?, ?)",
                  ((k, json.dumps(v), stamp) for k, v in incoming.environments.items()))
    added["environments"] = c.total_changes - before
    added["results"] = _insert_new_rows(c, incoming.results)
    before = c.total_changes
    c.executemany("INSERT OR IGNORE INTO peaks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  ([stored_value(p.get(k)) for k in PEAK_COLUMNS] for p in incoming.peaks
                   if all(p.get(k) for k in ("env_id", "backend", "metric"))
                   and isinstance(p.get("value"), (int, float))))
    added["peaks"] = c.total_changes - before
    return added


def _insert_new_rows(c: sqlite3.Connection, rows: Iterable[Mapping[str, Json]]) -> int:
    """``INSERT OR IGNORE`` every row, in file order; returns how many were new. Each row binds only the
    columns it holds a value in (:func:`workbench.store.import_stream.present_values`), consecutive rows with the
    same columns in one ``executemany``."""
    before = c.total_changes
    for cols, batch in value_batches(rows):
        c.executemany(f"INSERT OR IGNORE INTO results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                      batch)
    return c.total_changes - before


class _RowWriter:
    """The sink of a streamed import (:data:`workbench.store.import_stream.RowSink`): each checked batch of
    rows checked against the cells this store already has, then inserted (``INSERT OR IGNORE``) in the
    import's transaction. A row led by its place in the file (:data:`ROW_INDEX`) gets the rowid past every
    row stored before the import, so that file order holds across the statements of a batch.

    The inserts run on a thread of their own, one batch behind the reading: SQLite writes a batch (its
    ``sqlite3_step`` runs without the GIL) while the next one is decoded and checked. Why: SQLite's share of
    a million real rows' import is about two fifths, and it had waited for the decoding, and the decoding for
    it. At most one batch is in flight; its error (a full disk) is raised by the next call or :meth:`finish`.
    """

    #: The GIL's switch interval while importing: the writer thread takes the GIL back after every row's step,
    #: and at Python's default (5 ms) it waited that long each time the reading thread held it.
    SWITCH_INTERVAL_S = 0.0002

    def __init__(self, store: StoreExchange, c: sqlite3.Connection, where: str):
        self.store, self.c, self.where = store, c, where
        self.base = int(c.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM results").fetchone()[0])
        self.known_runs = {r for (r,) in c.execute("SELECT run_id FROM runs")}
        self.cells_of: set[str] = set()
        self.stored: dict[tuple[str, str], tuple[RowValue, ...]] = {}
        self.added = 0
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._interval = sys.getswitchinterval()

    def __call__(self, rows: list[JsonObject], plain: list[FieldGroup] | None, start: int) -> None:
        if self.known_runs:
            ours = {row["run_id"] for row in rows} & self.known_runs
            new_runs = ours - self.cells_of
            if new_runs:  # the stored cells of each known run, read once (not the rows this import added)
                self._wait()  # the connection to this thread alone while it reads
                self.stored.update(self.store._stored_cells(self.c, new_runs, below_rowid=self.base))
                self.cells_of |= new_runs
            if ours:
                self.store._check_rows_agree(self.stored, ((i, r) for i, r in enumerate(rows, start)
                                                           if r["run_id"] in ours), self.where)
        statements = [(f"INSERT OR IGNORE INTO results ({', '.join(cols)}) VALUES "
                       f"({', '.join(f'? + {self.base}' if k == ROW_INDEX else '?' for k in cols)})", batch)
                      for cols, batch in insert_groups(rows, plain, start)]
        self._wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-writer")
            sys.setswitchinterval(self.SWITCH_INTERVAL_S)
        self._pending = self._pool.submit(self._insert, statements)

    def _insert(self, statements: list[tuple[str, list[Any]]]) -> None:
        before = self.c.total_changes
        for sql, batch in statements:
            self.c.executemany(sql, batch)
        self.added += self.c.total_changes - before

    def _wait(self) -> None:
        """The batch in flight written (its error raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def finish(self, raise_error: bool = True) -> None:
        """Every batch written, the thread ended and the switch interval restored (after a failure too: the
        batch in flight ends before the caller rolls back; ``raise_error`` False: its own error is dropped)."""
        try:
            self._wait()
        except Exception:
            if raise_error:
                raise
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None
                sys.setswitchinterval(self._interval)


def _records(doc: Mapping[str, Any], key: str) -> Iterator[JsonObject]:
    items = doc.get(key) or []
    if not isinstance(items, list):
        raise ValueError(f"export field {key!r} must be a list")
    return (x for x in items if isinstance(x, dict))


def _finite(v: RowValue) -> RowValue:
    """Infinities become None in exports: strict JSON has no Infinity."""
    return None if isinstance(v, float) and not math.isfinite(v) else v

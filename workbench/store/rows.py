"""Result rows in the store: writing one cell's row, and reading rows back as dicts, frames or tuples.

A row's measurement-record columns (:data:`~workbench.core.record.RESULT_COLUMNS`) are columns of the
``results`` table; any other field goes into its ``extra`` column as JSON and is merged back when read. The
readers come in several shapes because a million rows do not fit one: :meth:`ResultRows.row_batches` and
:meth:`ResultRows.result_frames` hold a batch at a time, :meth:`ResultRows.results` reads column by column,
and :meth:`ResultRows.result_tuples` hands SQLite's own values (or CSV fields) to a CSV writer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.allocator import release_free_memory
from workbench.core.frames import share_strings
from workbench.core.record import RESULT_COLUMNS, RowDict, RowValue
from workbench.core.timestamps import now_iso
from workbench.store import fast_json
from workbench.store.connection import StoreConnection
from workbench.store.import_stream import stored_value
from workbench.store.stored_text import stored_row

if TYPE_CHECKING:  # pandas costs ~0.25 s and 45 MB a process; loaded only to return a table
    import pandas as pd

#: Rows read from SQLite per frame before their repeated strings are shared (:func:`share_strings`) and a
#: reader's ``chunk_map`` thins them. A chunk is held whole while it is read (real rows: 5 KB each with their
#: samples): 50,000 rows took 560 MB above the frame (a 100k-row report's read peaked at 670 MB, 280 MB at
#: 10,000 rows a chunk, in the same time; issue 38).
RESULT_CHUNK_ROWS = 10_000
_COLUMN_INDEX = {k: i for i, k in enumerate(RESULT_COLUMNS)}


def run_filter(run_ids: Iterable[str] | str | None) -> tuple[str, list[str]]:
    """(``WHERE`` clause, parameters) selecting the results of ``run_ids`` (None: every run; []: none). The
    runs' rowids are found by the run index, and the rows read in rowid order: filtered by ``run_id`` itself,
    SQLite read the rows by the index and sorted them all for ``ORDER BY rowid`` in a temporary B-tree (every
    selected value of a million rows, gigabytes, through a temporary file: issue 38)."""
    if run_ids is None:
        return "", []
    ids = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    if not ids:
        return "WHERE 0", ids
    return f"WHERE results.rowid IN (SELECT rowid FROM results WHERE run_id IN ({', '.join('?' * len(ids))}))", ids


class ResultRows(StoreConnection):
    """The ``results`` table: one row per (run, cell), written as each cell finishes."""

    def _row_values(self, row: Mapping[str, Any]) -> list[RowValue]:
        """The row as the results table's values: only the fields the row has are converted (a row holds a
        third of the columns; an import of a million rows converts each one once)."""
        values: list[RowValue] = [None] * (len(_COLUMN_INDEX) + 1)
        extra = {}
        for k, v in row.items():
            i = _COLUMN_INDEX.get(k)
            if i is not None:
                values[i] = stored_value(v)
            elif k != "extra":
                extra[k] = stored_value(v)
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
            # text capped and cleaned here, where a kernel's words enter the store (an import is checked instead)
            c.execute(self._insert_sql("INSERT") + f" ON CONFLICT(run_id, cell_key) DO UPDATE SET {update}",
                      self._row_values(stored_row(row)))
            # the cell in flight is done (same transaction: a crash between the two cannot blame it); the
            # heartbeat and wall time move on, so a killed run keeps the wall time it had
            c.execute("UPDATE runs SET in_flight = NULL, heartbeat_at = ?, wall_s = COALESCE(?, wall_s) "
                      "WHERE run_id = ?", (now_iso(), run_wall_s, row["run_id"]))
        self._checkpoint_soon()

    def has_rows_above(self, run_id: str, column: str, value: float) -> bool:
        """Whether a row of ``run_id`` has ``column`` (a results column) above ``value``: one indexed query, so
        a check at a run's end reads no rows when none qualifies."""
        if column not in _COLUMN_INDEX:
            raise ValueError(f"{column!r} is not a column of the results table")
        return bool(self._query(f"SELECT 1 FROM results WHERE run_id = ? AND {column} > ? LIMIT 1", (run_id, value)))

    def cell_keys(self, run_id: str) -> set[str]:
        return {r["cell_key"] for r in self._query("SELECT cell_key FROM results WHERE run_id = ?", (run_id,))}

    def rows(self, run_ids: Iterable[str] | str | None = None) -> list[RowDict]:
        """Result rows as dicts, in the order they were stored; extra fields are merged back in."""
        return [r for batch in self.row_batches(run_ids) for r in batch]

    def row_batches(self, run_ids: Iterable[str] | str | None = None,
                    rows_per_batch: int = 10_000) -> Iterator[list[RowDict]]:
        """:meth:`rows` a batch at a time (an export of a million rows holds one batch, not all)."""
        where, ids = run_filter(run_ids)
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
                columns: Iterable[str] | None = None, share_empty: bool = False,
                chunk_map: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> pd.DataFrame:
        """Tidy results, one row per cell, the measurement-record columns first.

        JSON columns (``params``, ``samples_s``, ``host_samples_s``) stay JSON text, as
        the contract says; ``json.loads`` them where needed. ``columns``: only these record columns (and
        every extra field), so a reader that needs a few of them never holds all of a million rows.
        ``share_empty``: record columns that are empty (NULL) in every selected row are not read but filled
        with None from one array they all share (a million rows of today's records left 28 of a report's 52
        columns empty: 8 MB each, and 40% of the read).
        ``chunk_map``: applied to each chunk of rows as it is read (before the next is), so a reader can drop
        what it does not need (a report, the samples of rows that have round medians) without holding it all.
        """
        import pandas as pd

        wanted = list(RESULT_COLUMNS) if columns is None else [c for c in RESULT_COLUMNS if c in set(columns)]
        # column by column from SQLite (a dict per row first cost ~5 KB a row: gigabytes for a million rows)
        with self._lock:
            where, ids = run_filter(self._fewer_runs(run_ids))
            have = {r[1] for r in self._conn.execute("PRAGMA table_info(results)")}
            empty = self._empty_columns([c for c in wanted if c in have], where, ids) if share_empty else []
            select = "*" if columns is None and not empty else ", ".join(
                c for c in [*wanted, "extra"] if c in have and c not in empty)
            query = f"SELECT {select} FROM results {where} ORDER BY rowid"
            shared: dict[str, dict[Any, Any]] = {}
            # a record column left in SQLite stays out of the extra fields (an extra field never shadows one)
            stored = set(empty) | (have if columns is not None or empty else set())
            chunks: list[dict[str, Any]] = []
            for chunk in pd.read_sql_query(query, self._conn, params=ids or None, chunksize=RESULT_CHUNK_ROWS):
                chunk = _with_extra_fields(share_strings(chunk_map(chunk) if chunk_map else chunk, shared),
                                           stored, shared)
                chunks.append({name: chunk[name] for name in chunk.columns})
                del chunk
                # each chunk's texts as SQLite gave them (a string per cell, its samples, its extra fields'
                # dicts) are garbage now, and glibc kept their pages between what stays: a million-row report's
                # read held 1.5x its frame
                release_free_memory()
            df = _joined(chunks) if chunks else _with_extra_fields(
                pd.read_sql_query(query, self._conn, params=ids or None), stored, shared)
            del chunks
            release_free_memory()
        if empty:  # as read, they would be object columns of None: one shared array (pandas copies on write)
            import numpy as np

            nulls = pd.Series(np.full(len(df), None, dtype=object), index=df.index)
            df = pd.concat([df, pd.DataFrame(dict.fromkeys(empty, nulls), copy=False)], axis=1)
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

        where, ids = run_filter(run_ids)
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
                      rows_per_batch: int = 1_000, csv_fields: bool = False, joined: bool = False
                      ) -> tuple[list[str], Iterator[Any]] | None:
        """(columns, batches of rows as tuples): the rows of :meth:`results` with every value converted by
        SQLite, so a CSV of a million rows goes from SQLite to the file without a frame per batch. A text
        value starting with one of ``quote_prefixes`` gets a leading ``'`` (a CSV's defence against formulas);
        extra fields are taken out of ``extra`` (JSON true/false as True/False, as a frame writes them).
        ``csv_fields``: each value comes as the csv module writes it (:func:`csv_field_text`), so
        ``",".join(row)`` is the row's CSV line (the csv module took longer over rows of 4 KB texts). None
        when an extra field is nested or oddly named: then :meth:`result_frames` writes them. Batches are small
        (a thousand 5 KB rows): a million-row CSV holds one batch at a time. ``joined`` (with ``csv_fields``):
        each batch is one text, its rows' CSV lines each ending CRLF (no tuple per row: a million rows' tuples
        kept the garbage collector busy)."""
        where, ids = run_filter(run_ids)
        with self._lock:
            extras = self._conn.execute(
                "SELECT DISTINCT j.key, j.type FROM results, json_each(CASE WHEN json_valid(results.extra) AND "
                f"json_type(results.extra) = 'object' THEN results.extra END) AS j {where}", ids).fetchall()
            have = {r[1] for r in self._conn.execute("PRAGMA table_info(results)")}
        if any(t in ("object", "array") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) for k, t in extras):
            return None
        keys = sorted({k for k, _ in extras} - set(RESULT_COLUMNS))
        prefixes = tuple(quote_prefixes)
        # csv_fields: raw values, made fields in Python (csv_field_text): SQLite's CASE per field read each
        # column up to five times, a third of a million-row CSV's time
        field = (lambda expr, _: expr) if csv_fields else formula_quoted_sql
        exprs = [field(k, prefixes) if k in have else "NULL" for k in RESULT_COLUMNS]
        exprs += [field(f"(CASE json_type(extra, '$.{k}') WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' "
                        f"ELSE json_extract(extra, '$.{k}') END)", prefixes) for k in keys]
        with self._lock:
            cur = self._conn.execute(f"SELECT {', '.join(exprs)} FROM results {where} ORDER BY rowid", ids)
        as_field = csv_field_text(prefixes)

        def batches() -> Iterator[list[tuple[Any, ...]]]:
            while True:
                with self._lock:
                    batch = cur.fetchmany(rows_per_batch)
                if not batch:
                    return
                if joined and csv_fields:
                    yield "".join([",".join(map(as_field, row)) + "\r\n" for row in batch])
                else:
                    yield [tuple(map(as_field, row)) for row in batch] if csv_fields else batch

        return [*RESULT_COLUMNS, *keys], batches()


def _prefix_test(expr: str, prefixes: tuple[str, ...]) -> str:
    """SQL: ``expr`` is text starting with one of ``prefixes``."""
    first = ", ".join("'" + p.replace("'", "''") + "'" for p in prefixes)
    return f"typeof({expr}) = 'text' AND substr({expr}, 1, 1) IN ({first})"


def formula_quoted_sql(expr: str, prefixes: tuple[str, ...]) -> str:
    """SQL: ``expr``, a text starting with one of ``prefixes`` led by ``'`` (a spreadsheet shows it as text)."""
    if not prefixes:
        return expr
    return f"(CASE WHEN {_prefix_test(expr, prefixes)} THEN '''' || {expr} ELSE {expr} END)"


def csv_field_text(prefixes: tuple[str, ...]) -> Callable[[Any], str]:
    """A function giving a value as Python's csv module writes it (``csv.writer(lineterminator="\\r\\n")``)
    after :func:`formula_quoted_sql`: None as '', a number as ``str`` writes it, text starting with one of
    ``prefixes`` led by ``'``, text holding a comma, a quote, CR or LF inside quotes with its quotes doubled
    (SQLite's CASE per field did this slower, reading each column up to five times)."""

    def field(v: Any) -> str:
        if v is None:
            return ""
        if type(v) is not str:
            return str(v)
        lead = "'" if v[:1] in prefixes else ""
        if '"' in v:
            return '"' + lead + v.replace('"', '""') + '"'
        if "," in v or "\n" in v or "\r" in v:
            return '"' + lead + v + '"'
        return lead + v if lead else v

    return field


#: A run of digits that may be an integer past 64 bits, which orjson reads as a float (``json`` as an int).
_LONG_DIGITS = re.compile(r"\d{19}")


def extra_fields(text: Any) -> Any:
    """A row's ``extra`` JSON text decoded as ``json.loads`` decodes it (None for no text): by orjson where it
    reads the text the same (no integer past 64 bits; a text it refuses goes to ``json``). Why: every row of a
    sweep carries extra fields, and ``json`` decoding them was a tenth of reading a million-row report's rows."""
    if not isinstance(text, str) or not text:
        return None
    if not _LONG_DIGITS.search(text):
        try:
            return fast_json.loads(text)
        except (ValueError, RecursionError):
            pass
    return json.loads(text)


def _with_extra_fields(df: pd.DataFrame, stored: set[str], shared: dict[str, dict[Any, Any]]) -> pd.DataFrame:
    """``df`` with its ``extra`` JSON column replaced by a column per extra field (those not in ``df`` or
    ``stored``), repeated texts shared as the record columns' are (:func:`share_strings`)."""
    import pandas as pd

    extra = df.pop("extra") if "extra" in df else None
    if extra is None or not extra.notna().any():
        return df
    parsed = [extra_fields(x) for x in extra]
    more = pd.DataFrame.from_records([x if isinstance(x, dict) else {} for x in parsed], index=df.index)
    # a million rows' round ids and precision settings, a few values, held a string per row: ~200 MB
    more = more[[c for c in more.columns if c not in stored and c not in df.columns]]
    try:
        more = share_strings(more, shared)
    except TypeError:  # a field holding lists or objects (unhashable): kept as decoded
        pass
    return pd.concat([df, more], axis=1)


def _joined(chunks: list[dict[str, Any]]) -> pd.DataFrame:
    """Frames read in chunks (each as its columns) as one frame with the dtypes one read would have given: a
    chunk whose numeric column was NULL throughout reads it as object (None), which would make the joined
    column object too. Joined a column at a time, each chunk's column let go once joined (a frame's concat
    held every row twice). An extra field missing from a chunk is missing (NaN) in its rows, as
    ``DataFrame.from_records`` leaves a key that some rows lack."""
    import pandas as pd

    if len(chunks) == 1:
        return pd.DataFrame(chunks[0], copy=False)
    names = list(dict.fromkeys(name for c in chunks for name in c))
    if any(len(c) != len(names) for c in chunks):  # some extra field in some chunks only: pandas fills the gaps
        return pd.concat([pd.DataFrame(c, copy=False) for c in chunks], ignore_index=True)
    out: dict[str, pd.Series] = {}
    for name in names:
        parts = [c.pop(name) for c in chunks]
        col = pd.concat(parts, ignore_index=True)
        if col.dtype == object and any(p.dtype.kind in "iuf" for p in parts):
            try:
                col = pd.to_numeric(col)
            except (TypeError, ValueError):  # text in a numeric column (an odd import): left as read
                pass
        out[name] = col
        del parts
    return pd.DataFrame(out, copy=False)

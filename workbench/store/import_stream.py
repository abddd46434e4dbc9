"""Reading a large export row by row, so that importing a million rows holds one row at a time, not all.

Why: ``json.loads`` of a whole export keeps every row as a Python dict (about 5 KB each): a million rows
took gigabytes. A file larger than :data:`STREAM_FROM_BYTES` is read once, a batch of rows at a time: each
batch is checked (the same checks as :func:`workbench.store.import_schema.validate_export`) and handed to the
import, which inserts it inside one transaction, rolled back when any later check fails (nothing is written
unless the whole file passes). The top-level object is walked with the standard library's decoder
(``raw_decode``) on a growing buffer: every value but the ``results`` list is decoded whole (runs,
environments and peaks are small), and ``results`` one element at a time.
"""

from __future__ import annotations

import codecs
import gc
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.core.record import RESULT_COLUMNS, Json, JsonObject, RowDict, RowValue
from workbench.store import fast_json
from workbench.store.plain_rows import FieldGroup

#: Exports at least this large are streamed (smaller ones are parsed whole, which is faster).
STREAM_FROM_BYTES = 64 << 20
CHUNK_CHARS = 1 << 20
#: The candidate ends (``}``) a row is tried at by orjson before the standard library's decoder takes it.
_FAST_TRIES = 4
_WS = re.compile(r"[ \t\r\n]*")


class _Scanner:
    """A JSON text read from a file in chunks: whitespace, single characters and whole values."""

    def __init__(self, path: Path, where: str, refuse_constant: Callable[[str], Any]):
        self.f = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.where = where
        self.text = codecs.getincrementaldecoder("utf-8-sig")()
        self.decoder = json.JSONDecoder(parse_constant=refuse_constant)
        self.buf, self.pos, self.eof, self.offset = "", 0, False, 0
        #: No :meth:`fast_rows` before this place in the text (where its tries last failed: see there).
        self.no_fast_before = 0

    def close(self) -> None:
        self.f.close()

    def _more(self, n: int = CHUNK_CHARS) -> bool:
        """Read at least ``n`` more bytes into the buffer (dropping what was consumed); False at the end."""
        if self.eof:
            return False
        data = self.f.read(max(n, CHUNK_CHARS))
        try:
            text = self.text.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{self.where}: not UTF-8 text (near byte {self.f.tell() - len(data) + exc.start:,}); "
                             "a workbench export is UTF-8 JSON") from None
        self.eof = not data
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), without consuming it."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            got = repr(c) if c else "the end of the file"
            raise ValueError(f"{self.where}: not valid JSON: expected {what} at character "
                             f"{self.offset + self.pos:,}, found {got}")
        self.pos += 1
        return c

    def fast_object(self, texts: list[RowText] | None) -> Any:
        """The next value when it is an object orjson decodes whole within a few tries (its end is one of the
        next ``}``), its text appended to ``texts``; else None (:meth:`value` decodes it). No depth check: a row
        that is not plain is decoded again from its text by the caller (``texts``), with every check."""
        if texts is None or self.peek() != "{":
            return None
        end = self.pos
        for _ in range(_FAST_TRIES):
            end = self.buf.find("}", end + 1)
            if end < 0:
                return None
            text = self.buf[self.pos:end + 1]
            try:
                v = fast_json.loads(text)
            except ValueError:
                continue
            texts.append(text)
            self.pos = end + 1
            return v
        return None

    def fast_rows(self, texts: list[RowText] | None) -> tuple[str, list[Any] | None]:
        """The next rows, as many as end in the buffer (read at least :data:`CHUNK_CHARS` ahead), when orjson
        decodes them in one call: the text from here to one of the last few ``}, {`` (a row's end, unless
        it is inside a string: then the decode fails and an earlier one is tried) as the elements of one
        list. Decoding from a row's start, a text that decodes whole is a sequence of whole rows (a cut inside
        a string or an inner object leaves it open). Each row's ``texts`` entry is the chunk and its place
        there (:func:`row_texts` splits it when the caller decodes a row again). Returns the chunk and its
        rows; no rows: :meth:`fast_object` and :meth:`value` take the next row."""
        if texts is None or self.peek() != "{" or self.offset + self.pos < self.no_fast_before:
            return "", None
        if len(self.buf) - self.pos < CHUNK_CHARS and not self.eof:
            self._more()
        end = len(self.buf)
        for _ in range(_FAST_TRIES):
            end = _last_row_end(self.buf, self.pos, end)
            if end < 0:
                return "", None
            chunk = self.buf[self.pos:end + 1]
            try:
                rows = fast_json.loads("[" + chunk + "]")
            except ValueError:
                continue
            self.pos = end + 1
            return chunk, rows
        # the rows up to the buffer's end go one by one: every try here would fail again the same way (the last
        # rows of a file, with the peaks' "}, {" after them, failed 4 tries of a 1 MB decode for every row)
        self.no_fast_before = self.offset + len(self.buf)
        return "", None

    def value(self, depth_check: Callable[[str, int, int], None]) -> Any:
        """The next whole JSON value. A value that ends exactly at the end of the buffer may be cut short
        (a number), so it is decoded again once more text is in. ``depth_check`` gets the buffer and the
        value's span in it (a copy of every row's text cost more than the count it was made for)."""
        self.peek()
        while True:
            try:
                v, end = self.decoder.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:
                    depth_check(self.buf, self.pos, end)
                    self.pos = end
                    return v
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise ValueError(f"{self.where}: not valid JSON: {exc.msg} (character "
                                     f"{self.offset + exc.pos:,})") from None
            except RecursionError:
                raise ValueError(f"{self.where}: JSON nested more than the parser allows; an export is never that "
                                 "deep") from None
            except ValueError as exc:  # NaN / Infinity, or an integer of thousands of digits
                raise ValueError(f"{self.where}: {exc}") from None
            self._more(len(self.buf))  # doubling: a large value is decoded O(log n) times, not once per chunk


#: A row's text for a caller that decodes it again: the text, a chunk of rows and the row's place in it
#: (:func:`row_texts`), or None (the standard library decoded it already, with the depth check).
RowText = str | tuple[str, int] | None
_ROW_END = re.compile(r"\}[ \t\r\n]*,[ \t\r\n]*\{")


def _last_row_end(buf: str, start: int, before: int) -> int:
    """The place of the last ``}`` in ``buf[start:before]`` followed by ``, {`` (a candidate row end), or -1."""
    at = buf.rfind("}", start, before)
    while at > start:
        if _ROW_END.match(buf, at):
            return at
        at = buf.rfind("}", start, at)
    return -1


def row_texts(chunk: str) -> list[str]:
    """The texts of the rows of ``chunk`` (rows separated by commas, as :meth:`_Scanner.fast_rows` took them),
    found by the standard library's decoder, which only finds each row's end here: the caller decodes the
    texts again with every check."""
    decoder, out, pos = json.JSONDecoder(), [], 0
    while pos < len(chunk):
        pos = _WS.match(chunk, pos).end()
        try:
            _, end = decoder.raw_decode(chunk, pos)
        except RecursionError:
            raise ValueError("JSON nested more than the parser allows; an export is never that deep") from None
        out.append(chunk[pos:end])
        pos = _WS.match(chunk, end).end() + 1  # past the comma
    return out


def iter_export(path: str | os.PathLike, where: str, head: JsonObject, refuse_constant: Callable[[str], Any],
                depth_check: Callable[[str, int, int], None], texts: list[RowText] | None = None) -> Iterator[Json]:
    """Walk an export: yields the elements of its ``results`` list in order, and fills ``head`` with its other
    top-level fields (``results`` reads there as an empty list); ``head`` is complete once the walk ends.
    ``texts``: rows are decoded by :mod:`workbench.store.fast_json` where they can be, each one's text appended
    there (None for a row the standard library decoded, with the depth check): the caller decodes again, from
    its text, a row it does not vouch for (orjson reads an integer beyond 64 bits as a float, and nests deeper
    than :data:`~workbench.store.export_schema.MAX_DEPTH`)."""
    s = _Scanner(Path(path), where, refuse_constant)
    try:
        if s.peek() != "{":
            raise ValueError(f"{where} is not a workbench results export (a JSON object with format "
                             "'workbench-results')")
        s.expect("{", "'{'")
        if s.peek() == "}":
            s.pos += 1
            return
        while True:
            key = s.value(depth_check)
            if not isinstance(key, str):
                raise ValueError(f"{where}: not valid JSON: an object key must be a string")
            s.expect(":", "':'")
            if key == "results" and s.peek() == "[":
                s.pos += 1
                head["results"] = []
                if s.peek() == "]":
                    s.pos += 1
                else:
                    while True:
                        chunk, rows = s.fast_rows(texts)
                        if rows:
                            for k, row in enumerate(rows):  # its text entry as it is yielded (batches end anywhere)
                                texts.append((chunk, k))  # type: ignore[union-attr]  # rows only where texts is
                                yield row
                            if s.expect(",]", "',' or ']'") == "]":
                                break
                            continue
                        row = s.fast_object(texts)
                        if row is None:
                            row = s.value(depth_check)
                            if texts is not None:
                                texts.append(None)
                        yield row
                        if s.expect(",]", "',' or ']'") == "]":
                            break
            else:
                head[key] = s.value(depth_check)
            if s.expect(",}", "',' or '}'") == "}":
                break
        if s.peek():
            raise ValueError(f"{where}: not valid JSON: text after the end of the document")
    finally:
        s.close()


#: The cyclic garbage collector's first threshold while a large file's rows are read (Python's default: 700).
GC_YOUNG_THRESHOLD = 100_000


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """Python's cyclic garbage collector run only once :data:`GC_YOUNG_THRESHOLD` more container objects were
    made than freed (not 700), while a large file's rows are read; as it was after. Why: the decoders make a
    row dict and its lists of numbers by the hundred thousand, none in a cycle (reference counting frees each
    at once), and at 700 the collector walked most of them (a row's 96 fields each) before they were freed:
    0.67 of 6.6 CPU s for 100,000 real-shaped rows. Not off: cycles that a slow path makes (jsonschema's
    errors hold their parents) are still collected, a hundred thousand at a time."""
    before = gc.get_threshold()
    if before[0]:  # 0: automatic collection is off, and stays so
        gc.set_threshold(max(before[0], GC_YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


# -- a row as the results table keeps it ------------------------------------------------------------

def stored_value(v: Any) -> RowValue:
    """A value the store accepts: text, number or None; lists and dicts become JSON text."""
    if v is None or isinstance(v, (str, int)):
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return v if not math.isnan(v) else None
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    try:  # numpy scalars
        return stored_value(v.item())
    except AttributeError:
        return str(v)


def present_values(row: Mapping[str, Any]) -> tuple[tuple[str, ...], list[RowValue]]:
    """The result columns ``row`` holds a value in, and those values as the store keeps them; fields that
    are no column go to ``extra`` as JSON text. Why only the present ones: binding a NULL costs Python's
    sqlite3 about ten times a number (an adapter lookup per value), and a row fills a third of the columns."""
    cols: list[str] = []
    values: list[RowValue] = []
    extra: RowDict | None = None
    for k, v in row.items():
        if k in RESULT_COLUMNS:
            if v is None:
                continue
            t = type(v)
            if t is float:
                if v != v:  # NaN is stored as NULL
                    continue
            elif t is not str and t is not int:
                v = stored_value(v)
                if v is None:
                    continue
            cols.append(k)
            values.append(v)
        elif k != "extra":
            if extra is None:
                extra = {}
            extra[k] = stored_value(v)
    if extra:
        cols.append("extra")
        values.append(json.dumps(extra))
    return tuple(cols), values


def value_batches(rows: Iterable[Mapping[str, Any]], limit: int = 20_000
                  ) -> Iterator[tuple[tuple[str, ...], list[list[Any]]]]:
    """Consecutive rows (:func:`present_values`) with the same columns, ``limit`` at most: one prepared
    statement and one ``executemany`` each, in file order."""
    cols: tuple[str, ...] | None = None
    batch: list[list[Any]] = []
    for row in rows:
        row_cols, values = present_values(row)
        if (row_cols != cols or len(batch) >= limit) and batch:
            yield cols or (), batch
            batch = []
        cols = row_cols
        batch.append(values)
    if batch:
        yield cols or (), batch


#: The first column of a spooled batch of plain rows: each row's place in the file, from which the insert sets
#: its ``rowid`` (the rows of a batch are grouped by the columns they fill, and still read in file order).
ROW_INDEX = "rowid"


_JSON_STRING = json.encoder.encode_basestring_ascii  # what json.dumps writes a str as (C)


def extra_texts(names: list[str], columns: list[tuple[Json, ...]]) -> tuple[str, ...]:
    """``json.dumps(dict(zip(names, row)))`` of each row of ``columns`` (the values of fields ``names``), the
    same texts, a column at a time: a column of strings (a sweep's ``round_ids``) is encoded by json's C
    string encoder in one ``map``, any other column value by value with ``json.dumps``. Why: a ``json.dumps``
    per row (of a million) took longer than its row's insert."""
    parts = []
    for name, column in zip(names, columns, strict=True):
        key = _JSON_STRING(name) + ": "
        values = map(_JSON_STRING, column) if set(map(type, column)) == {str} else map(json.dumps, column)
        parts.append([key + v for v in values])
    if len(parts) == 1:
        return tuple(["{" + p + "}" for p in parts[0]])
    return tuple(["{" + ", ".join(row) + "}" for row in zip(*parts, strict=True)])


def _plain_value_groups(groups: list[FieldGroup], start: int) -> list[tuple[tuple[str, ...], list[tuple[Json, ...]]]]:
    """:func:`value_batches` of plain rows (their :class:`~workbench.store.plain_rows.FieldGroup` s: the rows
    of each set of fields, a column at a time): one statement a group, its rows in file order, each led by its
    place in the file (:data:`ROW_INDEX`, ``start`` for the batch's first). A column that is None in every row
    of the group is left out (not bound); one that some rows fill binds NULL in the others. The fields that are
    no column become each row's ``extra`` (JSON text, as :func:`present_values` writes it). Why not grouped by
    the columns each row fills, as :func:`value_batches` is: binding a NULL costs Python's sqlite3 several
    times a number (an adapter lookup, about 0.25 us), but finding each row's NULLs looked at every value of the
    batch again (a tenth of the CPU of a real-shaped import), while such rows leave 4 of their 75 filled
    columns NULL on average."""
    out = []
    for g in groups:
        keys, columns = g.keys, g.columns
        present = [j for j, k in enumerate(keys) if k in RESULT_COLUMNS and j not in g.empty]
        names, values = [keys[j] for j in present], [columns[j] for j in present]
        others = [j for j, k in enumerate(keys) if k not in RESULT_COLUMNS]
        if others:
            names.append("extra")
            values.append(extra_texts([keys[j] for j in others], [columns[j] for j in others]))
        index = range(start, start + len(g.members)) if len(groups) == 1 else [start + i for i in g.members]
        out.append(((ROW_INDEX, *names), list(zip(index, *values, strict=True))))
    return out


#: Where :func:`workbench.store.import_schema.load_export` hands each checked batch of a large file's rows:
#: ``sink(rows, plain, start)`` (``start``: the first one's place in the file; ``plain``: see
#: :func:`insert_groups`).
RowSink = Callable[[list[JsonObject], "list[FieldGroup] | None", int], None]


def insert_groups(rows: list[JsonObject], plain: list[FieldGroup] | None,
                  start: int) -> list[tuple[tuple[str, ...], list[Any]]]:
    """``rows`` (the file's rows from ``start`` on) as the store inserts them: the columns of one statement and
    its rows' values. ``plain``: the rows' field groups when they passed the batch check
    (:func:`workbench.store.plain_rows.plain_groups`: numbers and text only), converted in C-level
    transpositions a group of rows at a time (:func:`_plain_value_groups`, each row led by its place in the
    file), not value by value; None: row by row."""
    return _plain_value_groups(plain, start) if plain else list(value_batches(rows))


class StreamedRows:
    """The ``results`` of a validated large export: how many rows it has and the environments they name. Its
    rows went to the import's sink (see :data:`RowSink`) as they were checked, and are not kept."""

    def __init__(self, path: str | os.PathLike, count: int, env_ids: set[str]):
        self.path, self.count, self.env_ids = Path(path), count, env_ids

    def __len__(self) -> int:
        return self.count

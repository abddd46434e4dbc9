"""The fast path of an import's validation: the usual result rows checked without jsonschema.

Why: jsonschema checks a row in about a hundred microseconds; a million-row import spent most of its time
there. These checks say True only for values :data:`workbench.store.export_schema.RESULT_SCHEMA` accepts (they
may say False for some valid ones: those rows go through jsonschema, which also says what is wrong), first a
batch of rows a column at a time (:func:`plain_rows`), else a row at a time (:func:`plain_row`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.record import JSON_COLUMNS, RESULT_COLUMNS
from workbench.store import fast_json
from workbench.store.export_schema import (
    CONTROL_CHARS,
    ENUM_COLUMNS,
    ID_PATTERN,
    INT64,
    LONG_TEXT_COLUMNS,
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_JSON_TEXT_CHARS,
    MAX_LONG_TEXT_CHARS,
    MAX_TEXT_CHARS,
    NON_NEGATIVE_COLUMNS,
    REQUIRED_TEXT_COLUMNS,
)

_ID_RE = re.compile(ID_PATTERN)


def _plain_number(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1])


def _plain_check(name: str, sql_type: str) -> Callable[[Any], bool]:
    """A predicate that is True only for values :data:`RESULT_SCHEMA` accepts for column ``name`` (it may
    say False for some valid ones: those rows go through jsonschema)."""
    if name in ("run_id", "cell_key", "env_id"):
        nullable = name == "env_id"
        return lambda v: (v is None and nullable) or (isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS
                                                      and _ID_RE.match(v) is not None)
    if name in JSON_COLUMNS:
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_JSON_TEXT_CHARS)
    if name in ENUM_COLUMNS:
        return lambda v: v is None or (type(v) is str and v in ENUM_COLUMNS[name])
    if name in REQUIRED_TEXT_COLUMNS:
        return lambda v: isinstance(v, str) and 0 < len(v) <= MAX_TEXT_CHARS and CONTROL_CHARS.search(v) is None
    if name in NON_NEGATIVE_COLUMNS:
        return lambda v: v is None or (_plain_number(v) and v >= 0)
    if sql_type == "TEXT" and name in LONG_TEXT_COLUMNS:
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_LONG_TEXT_CHARS)
    if sql_type == "TEXT":
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_TEXT_CHARS
                                       and CONTROL_CHARS.search(v) is None)
    if sql_type == "INTEGER":
        return lambda v: isinstance(v, bool) or _plain_number(v)
    return _plain_number


_PLAIN = {k: _plain_check(k, t) for k, t in RESULT_COLUMNS.items()}
_REQUIRED_KEYS = ("run_id", "cell_key", *REQUIRED_TEXT_COLUMNS)


def plain_json_column(key: str, value: Any) -> bool:
    """The fast path of a decoded JSON column: params {axis: size}, samples a list of numbers."""
    if value is None:
        return True
    if key == "params":
        return isinstance(value, dict) and len(value) <= 64 and all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= INT64[1] for v in value.values())
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        return False
    if set(map(type, value)) <= {float}:  # the usual samples: one C-level sum instead of a call per number
        return math.isfinite(sum(value))  # an infinity (1e999) makes the sum so; an overflow is checked slowly
    return all(_plain_number(v) for v in value)


def plain_number_lists(texts: Sequence[str]) -> bool:
    """True only when every text is a JSON list of numbers :func:`plain_json_column` passes (finite, within
    64 bits: orjson reads a larger integer as a float, and refuses an infinity such as 1e999). Each text is
    decoded alone (no joined copy of a batch's megabytes), and the numbers are judged by the C-level ``max``
    and ``min`` of each list: comparing a number with a string, null, list or object raises TypeError, and a
    text holding the letter ``t`` or ``f`` (a ``true`` or ``false``: a bool compares as a number) is not
    judged here. Why: a sweep's rows carry several such columns (samples, host samples, round medians: ~350
    numbers a row), and a list of every number and passes over it for their types and sum cost a third of a
    million-row import's checks. False for any doubt (whitespace around a text, a bool, an empty text): those
    texts are judged one by one."""
    if not texts:
        return True
    if not all(t[:1] == "[" and t[-1:] == "]" for t in texts):
        return False
    try:
        lists = list(map(fast_json.loads, texts))
    except (ValueError, RecursionError):
        return False
    if set(map(type, lists)) != {list} or max(map(len, lists)) > MAX_ITEMS:
        return False
    filled = list(filter(None, lists))
    if not filled:
        return True
    if any("t" in t or "f" in t for t in texts):
        return False
    try:
        return max(map(max, filled)) < 2.0 ** 63 and min(map(min, filled)) > -2.0 ** 63
    except TypeError:  # a string, null, list or object among the numbers
        return False


def plain_extra(v: Any) -> bool:
    """A field that is no column (a sweep's ``round_ids``, ``precision``: kept in ``extra``) whose value the
    schema's ``value`` accepts without a walk: text of at most :data:`MAX_LONG_TEXT_CHARS`, a number, a
    bool or null (a list or an object goes through jsonschema)."""
    t = type(v)
    if t is str:
        return len(v) <= MAX_LONG_TEXT_CHARS
    return v is None or t is bool or _plain_number(v)


def plain_row(row: Any) -> bool:
    """True when ``row`` is an object of known columns and plain other fields (:func:`plain_extra`), each of
    a type the schema accepts (the fast path)."""
    if not isinstance(row, dict) or not all(k in row for k in _REQUIRED_KEYS):
        return False
    plain = _PLAIN
    for k, v in row.items():
        check = plain.get(k, plain_extra if k != "extra" else None)
        if check is None or not check(v):
            return False
    return True


def _plain_numbers(values: Sequence[Any], nullable: bool, allow_bool: bool, non_negative: bool) -> bool:
    """:func:`_plain_number` (or a bool, or >= 0) of every value, in C-level loops (min, max, sum)."""
    types = set(map(type, values))
    allowed = {int, float} | ({type(None)} if nullable else set()) | ({bool} if allow_bool else set())
    if not types <= allowed:
        return False
    nums = [v for v in values if v is not None] if type(None) in types else values
    if not nums:
        return True
    try:  # a finite sum says every number is finite; an overflow (or a huge integer) is judged row by row
        if not math.isfinite(sum(nums)):
            return False
    except OverflowError:
        return False
    low, high = min(nums), max(nums)
    return (low >= 0 if non_negative else low >= INT64[0]) and high <= INT64[1]


def _strings(values: Sequence[Any], nullable: bool) -> Sequence[str] | None:
    """The values that are not None when every one is a string (or None, if ``nullable``), else None."""
    types = set(map(type, values))
    if not types <= ({str, type(None)} if nullable else {str}):
        return None
    return [v for v in values if v is not None] if type(None) in types else values


def _plain_texts(values: Sequence[Any], nullable: bool, limit: int, printable: bool, min_len: int = 0) -> bool:
    """Every value a string (or None) of ``min_len`` to ``limit`` characters, without control characters when
    ``printable`` (one search of them all)."""
    strs = _strings(values, nullable)
    if strs is None:
        return False
    if not strs:
        return True
    if printable:  # most such columns repeat a few values (device, bound, threads): each searched once
        distinct = set(strs)  # (not for JSON texts: hashing a batch's samples cost more than their lengths)
        if len(distinct) * 2 < len(strs):
            strs = list(distinct)
    lengths = list(map(len, strs))
    if min(lengths) < min_len or max(lengths) > limit:
        return False
    return not printable or CONTROL_CHARS.search("".join(strs)) is None


_IDS = re.compile(rf"(?:[A-Za-z0-9_][A-Za-z0-9_.:+-]{{0,{MAX_ID_CHARS - 1}}}\n)*")


def _plain_ids(values: Sequence[Any], nullable: bool) -> bool:
    """Every value an identifier (:data:`ID_PATTERN`, at most :data:`MAX_ID_CHARS`), by one regular expression
    over them all, one per line."""
    strs = _strings(values, nullable)
    return strs is not None and _IDS.fullmatch("".join(v + "\n" for v in strs)) is not None


def _plain_column(name: str, sql_type: str) -> Callable[[Sequence[Any]], bool]:
    """The column check of :func:`plain_rows` for ``name``: True only if :func:`_plain_check` would say
    True for every value."""
    if name in ("run_id", "cell_key", "env_id"):
        return lambda vs: _plain_ids(vs, nullable=name == "env_id")
    if name in JSON_COLUMNS:
        return lambda vs: _plain_texts(vs, True, MAX_JSON_TEXT_CHARS, printable=False)
    if name in ENUM_COLUMNS:
        return lambda vs: all(v is None or (type(v) is str and v in ENUM_COLUMNS[name]) for v in vs)
    if name in REQUIRED_TEXT_COLUMNS:
        return lambda vs: _plain_texts(vs, False, MAX_TEXT_CHARS, printable=True, min_len=1)
    if name in NON_NEGATIVE_COLUMNS:
        return lambda vs: _plain_numbers(vs, nullable=True, allow_bool=False, non_negative=True)
    if sql_type == "TEXT":
        long = name in LONG_TEXT_COLUMNS
        return lambda vs: _plain_texts(vs, True, MAX_LONG_TEXT_CHARS if long else MAX_TEXT_CHARS, printable=not long)
    return lambda vs: _plain_numbers(vs, nullable=True, allow_bool=sql_type == "INTEGER", non_negative=False)


_PLAIN_COLUMNS = {k: _plain_column(k, t) for k, t in RESULT_COLUMNS.items()}


def _plain_extra_column(values: Sequence[Any]) -> bool:
    """:func:`plain_extra` of every value of a field that is no column: texts, or numbers, bools and nulls."""
    types = set(map(type, values))
    if types <= {str, type(None)}:
        return _plain_texts(values, True, MAX_LONG_TEXT_CHARS, printable=False)
    return types <= {int, float, bool, type(None)} and _plain_numbers(values, True, True, False)


@dataclass(frozen=True)
class FieldGroup:
    """The rows of a batch that have the same fields in the same order: their places in the batch and their
    values a column at a time (one C-level transposition, made once for the check and reused by the insert
    and the checks of JSON columns and cells: each made it again, a fifth of a million-row import)."""

    keys: tuple[str, ...]
    members: list[int]
    columns: list[tuple[Any, ...]]

    def column(self, key: str) -> tuple[Any, ...] | None:
        """The values of field ``key`` (None when these rows lack it)."""
        try:
            return self.columns[self.keys.index(key)]
        except ValueError:
            return None


def plain_groups(rows: list[Any]) -> list[FieldGroup] | None:
    """:func:`plain_row` of every row at once: rows with the same fields (columns, and others kept in
    ``extra``: :func:`plain_extra`) are checked a column at a time (a row by row check calls a predicate
    per value: a third of a million-row import). Returns the rows as :class:`FieldGroup` s when every row
    passed; None for any doubt (those rows are checked one by one)."""
    if not rows or not all(type(r) is dict for r in rows):
        return None
    keys = tuple(rows[0])
    if all(tuple(r) == keys for r in rows):
        by_keys = {keys: list(range(len(rows)))}
    else:  # rows of other fields: each set of fields checked on its own
        by_keys = {}
        for i, r in enumerate(rows):
            by_keys.setdefault(tuple(r), []).append(i)
    groups = []
    for keys, members in by_keys.items():
        group = rows if len(members) == len(rows) else [rows[i] for i in members]
        columns = _plain_columns(keys, group)
        if columns is None:
            return None
        groups.append(FieldGroup(keys, members, columns))
    return groups


def plain_rows(rows: list[Any]) -> bool:
    """Whether every row passes :func:`plain_row` (see :func:`plain_groups`)."""
    return plain_groups(rows) is not None


def _plain_columns(keys: tuple[str, ...], rows: list[Any]) -> list[tuple[Any, ...]] | None:
    """The columns of rows with the fields ``keys`` in that order, when every value passes its column's check
    (else None)."""
    if not all(k in keys for k in _REQUIRED_KEYS):
        return None
    checks = [_PLAIN_COLUMNS.get(k, _plain_extra_column if k != "extra" else None) for k in keys]
    if None in checks:
        return None
    # the same fields in the same order: the batch turned into its columns in one C-level transposition (of
    # tuples: zip over a thousand dict views took 1.6x as long)
    columns = list(zip(*map(tuple, map(dict.values, rows)), strict=True))
    return columns if all(check(values) for check, values in zip(checks, columns, strict=True)) else None


#: Rows checked together by :func:`plain_rows`.
PLAIN_BATCH_ROWS = 1024

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
from itertools import chain, repeat, starmap
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
    decoded alone (no joined copy of a batch's megabytes), and each list's numbers are judged by one
    ``math.hypot`` (see :func:`_plain_numbers`; a string, null, list or object among them raises TypeError
    there); a text holding the letter ``t`` or ``f`` (a ``true`` or ``false``: a bool passes as a number) is not
    judged here. Why: a sweep's rows carry several such columns (samples, host samples, round medians: ~350
    numbers a row), and their check was a third of a million-row import's. False for any doubt (whitespace
    around a text, a bool, an empty text): those texts are judged one by one."""
    if not texts:
        return True
    if not all(map(str.startswith, texts, repeat("["))) or not all(map(str.endswith, texts, repeat("]"))):
        return False
    try:
        lists = list(map(fast_json.loader(), texts))
    except (ValueError, RecursionError):
        return False
    if set(map(type, lists)) != {list} or max(map(len, lists)) > MAX_ITEMS:
        return False
    if not any(lists):
        return True
    joined = "".join(texts)  # one scan of them all (a text starts with [ and ends with ]: no letter spans two)
    if "t" in joined or "f" in joined:
        return False
    try:  # a list's hypot is at least its largest magnitude (see _plain_numbers)
        if max(starmap(math.hypot, lists)) < 2.0 ** 62:
            return True
        numbers = list(chain.from_iterable(lists))  # large numbers: judged exactly
        return max(numbers) < 2.0 ** 63 and min(numbers) > -2.0 ** 63
    except (TypeError, OverflowError):  # a non-number
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


def _plain_numbers(values: Sequence[Any], types: set[type], nullable: bool, allow_bool: bool,
                   non_negative: bool) -> bool:
    """:func:`_plain_number` (or a bool, or >= 0) of every value (of ``types``), in C-level loops. Why
    ``math.hypot``: it is at least the largest magnitude, and reads its arguments as C doubles in one pass,
    where ``sum``, ``max`` and ``min`` made three (``max`` and ``min`` comparing Python objects: 3.5x as long);
    under 2**62 (a margin for its rounding) every number is finite and within 64 bits. Larger numbers are
    judged exactly, by ``max`` and ``min``, so that a column of large seeds stays on this path."""
    allowed = {int, float} | ({type(None)} if nullable else set()) | ({bool} if allow_bool else set())
    if not types <= allowed:
        return False
    nums = [v for v in values if v is not None] if type(None) in types else values
    if not nums:
        return True
    try:
        if math.hypot(*nums) < 2.0 ** 62:
            return not non_negative or min(nums) >= 0
        if not math.isfinite(sum(nums)):  # an infinity (or an overflow): judged row by row
            return False
    except OverflowError:  # an integer beyond a double's range
        return False
    low, high = min(nums), max(nums)
    return (low >= 0 if non_negative else low >= INT64[0]) and high <= INT64[1]


def _strings(values: Sequence[Any], types: set[type], nullable: bool) -> Sequence[str] | None:
    """The values that are not None when every one (of ``types``) is a string (or None, if ``nullable``), else
    None."""
    if not types <= ({str, type(None)} if nullable else {str}):
        return None
    return [v for v in values if v is not None] if type(None) in types else values


def _plain_texts(values: Sequence[Any], types: set[type], nullable: bool, limit: int, printable: bool,
                 min_len: int = 0) -> bool:
    """Every value a string (or None) of ``min_len`` to ``limit`` characters, without control characters when
    ``printable`` (one search of them all)."""
    strs = _strings(values, types, nullable)
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


def _plain_ids(values: Sequence[Any], types: set[type], nullable: bool) -> bool:
    """Every value an identifier (:data:`ID_PATTERN`, at most :data:`MAX_ID_CHARS`), by one regular expression
    over them all, one per line."""
    strs = _strings(values, types, nullable)
    return strs is not None and _IDS.fullmatch("".join(v + "\n" for v in strs)) is not None


#: A column check of :func:`plain_rows`: the column's values and the set of their types (made once per column).
ColumnCheck = Callable[[Sequence[Any], set[type]], bool]


def _plain_enum(allowed: tuple[str, ...]) -> ColumnCheck:
    """Every value None or one of the strings ``allowed`` (each distinct value looked at once)."""
    names = frozenset(allowed)
    return lambda vs, types: types <= {str, type(None)} and set(vs) - {None} <= names


def _plain_column(name: str, sql_type: str) -> ColumnCheck:
    """The column check of :func:`plain_rows` for ``name``: True only if :func:`_plain_check` would say
    True for every value."""
    if name in ("run_id", "cell_key", "env_id"):
        return lambda vs, ts: _plain_ids(vs, ts, nullable=name == "env_id")
    if name in JSON_COLUMNS:
        return lambda vs, ts: _plain_texts(vs, ts, True, MAX_JSON_TEXT_CHARS, printable=False)
    if name in ENUM_COLUMNS:
        return _plain_enum(ENUM_COLUMNS[name])
    if name in REQUIRED_TEXT_COLUMNS:
        return lambda vs, ts: _plain_texts(vs, ts, False, MAX_TEXT_CHARS, printable=True, min_len=1)
    if name in NON_NEGATIVE_COLUMNS:
        return lambda vs, ts: _plain_numbers(vs, ts, nullable=True, allow_bool=False, non_negative=True)
    if sql_type == "TEXT":
        long = name in LONG_TEXT_COLUMNS
        return lambda vs, ts: _plain_texts(vs, ts, True, MAX_LONG_TEXT_CHARS if long else MAX_TEXT_CHARS,
                                           printable=not long)
    return lambda vs, ts: _plain_numbers(vs, ts, nullable=True, allow_bool=sql_type == "INTEGER", non_negative=False)


_PLAIN_COLUMNS = {k: _plain_column(k, t) for k, t in RESULT_COLUMNS.items()}


def _plain_extra_column(values: Sequence[Any], types: set[type]) -> bool:
    """:func:`plain_extra` of every value of a field that is no column: texts, or numbers, bools and nulls."""
    if types <= {str, type(None)}:
        return _plain_texts(values, types, True, MAX_LONG_TEXT_CHARS, printable=False)
    return types <= {int, float, bool, type(None)} and _plain_numbers(values, types, True, True, False)


@dataclass(frozen=True)
class FieldGroup:
    """The rows of a batch that have the same fields in the same order: their places in the batch and their
    values a column at a time (one C-level transposition, made once for the check and reused by the insert
    and the checks of JSON columns and cells: each made it again, a fifth of a million-row import)."""

    keys: tuple[str, ...]
    members: list[int]
    columns: list[tuple[Any, ...]]
    #: The places (in ``keys``) of the fields that are None in every one of these rows (seen by the check, which
    #: makes each column's set of types: the insert leaves them out without looking at them again).
    empty: frozenset[int] = frozenset()

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
        checked = _plain_columns(keys, group)
        if checked is None:
            return None
        groups.append(FieldGroup(keys, members, *checked))
    return groups


def plain_rows(rows: list[Any]) -> bool:
    """Whether every row passes :func:`plain_row` (see :func:`plain_groups`)."""
    return plain_groups(rows) is not None


def _plain_columns(keys: tuple[str, ...], rows: list[Any]) -> tuple[list[tuple[Any, ...]], frozenset[int]] | None:
    """The columns of rows with the fields ``keys`` in that order and the places of those that are None in every
    row, when every value passes its column's check (else None)."""
    if not all(k in keys for k in _REQUIRED_KEYS):
        return None
    checks = [_PLAIN_COLUMNS.get(k, _plain_extra_column if k != "extra" else None) for k in keys]
    if None in checks:
        return None
    # the same fields in the same order: the batch turned into its columns in one C-level transposition (of
    # tuples: zip over a thousand dict views took 1.6x as long)
    columns = list(zip(*map(tuple, map(dict.values, rows)), strict=True))
    empty = []
    for j, (check, values) in enumerate(zip(checks, columns, strict=True)):
        types = set(map(type, values))
        if not check(values, types):
            return None
        if types == _NONE_ONLY:
            empty.append(j)
    return columns, frozenset(empty)


_NONE_ONLY = {type(None)}


#: Rows checked together by :func:`plain_rows`: at most this many, and in a large file's import about
#: :data:`BATCH_TEXT_CHARS` of JSON text columns (see :func:`next_batch_rows`).
PLAIN_BATCH_ROWS = 1024
#: The characters of JSON text columns (samples and the like) a batch of a large file's rows holds, with
#: :data:`MIN_BATCH_ROWS` rows at least. Why: a batch's rows are decoded, checked, transposed and bound in turn,
#: and 1,024 real rows (9.5 MB) did not stay in the cache from one step to the next: batches of 128 such rows
#: took 10% less CPU than 1,024 (and 40 MB less memory), while one-line synthetic rows (0.7 KB) took 12% more.
BATCH_TEXT_CHARS = 1 << 20
MIN_BATCH_ROWS = 128


def next_batch_rows(groups: list[FieldGroup] | None, rows: int, limit: int) -> int:
    """How many rows the next batch of a large file takes after a batch of ``rows`` rows (``groups``: its plain
    rows; None: not plain, then ``limit``): :data:`BATCH_TEXT_CHARS` of JSON text columns at the last batch's
    rate, at least :data:`MIN_BATCH_ROWS` and at most ``limit``."""
    if not groups or not rows:
        return limit
    chars = sum(sum(map(len, filter(None, column))) for g in groups for key in JSON_COLUMNS
                if (column := g.column(key)) is not None)
    return min(limit, max(MIN_BATCH_ROWS, BATCH_TEXT_CHARS * rows // max(chars, 1)))

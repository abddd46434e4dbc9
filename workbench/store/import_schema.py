"""What ``workbench import`` accepts: the export schema, and :func:`load_export`, which reads a file against it.

An export comes from another machine, so nothing in it is trusted. The file is
read as bytes (size limited), decoded as UTF-8, its nesting depth checked
*before* the JSON parser recurses into it, parsed with NaN/Infinity refused,
and validated with :mod:`jsonschema`: every field of the store's tables has a
type, identifiers (run, environment, cell ids) are short and cannot become a
path, strings and lists have size limits. A problem is one ValueError naming
the file and the field path (``results[3].wall_s``), never a traceback, and
nothing is written to a store before the whole document passed.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.core.output_guard import is_workbench_export
from workbench.core.record import JSON_COLUMNS, RESULT_COLUMNS
from workbench.store.import_stream import STREAM_FROM_BYTES, StreamedRows, ValueSpool, iter_export

#: What the store writes (``workbench.store.database.EXPORT_FORMAT`` / ``EXPORT_VERSION``, passed in by the store).
EXPORT_FORMAT = "workbench-results"
EXPORT_VERSION = 1

MAX_FILE_BYTES = 512 << 20
#: Objects and lists inside one another (an export needs about 8; an environment record a few more).
MAX_DEPTH = 32
#: Run, environment and cell ids: identifiers, never paths.
MAX_ID_CHARS = 128
ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:+-]*$"
#: Names, statuses, dates, dtypes ...; messages and tracebacks; JSON text columns (samples of a cell).
MAX_TEXT_CHARS = 4096
MAX_LONG_TEXT_CHARS = 1 << 20
MAX_JSON_TEXT_CHARS = 4 << 20
MAX_ITEMS = 1_000_000
MAX_KEYS = 10_000
INT64 = (-(1 << 63), (1 << 63) - 1)

#: Result columns holding free text that may be long.
LONG_TEXT_COLUMNS = ("message", "traceback", "noise_note", "peak_note")
#: Result columns every row must have, as non-empty text: a report groups and labels rows by them.
REQUIRED_TEXT_COLUMNS = ("kernel", "variant", "backend", "dtype", "status")
#: Result columns that count or measure something, so can never be negative.
NON_NEGATIVE_COLUMNS = ("size", "n_samples", "median_s", "mean_s", "min_s", "q1_s", "q3_s", "iqr_s",
                        "host_median_s", "flops", "bytes", "gflops", "gbps", "peak_mem_bytes", "wall_s", "setup_s",
                        "first_call_s", "warmup_calls", "calls_per_sample", "n_inputs", "rounds")
#: Run statuses an export may carry (``running`` is imported as ``interrupted``: no process here writes it).
RUN_STATUSES = ("running", "finished", "interrupted")


class _Refused(ValueError):
    """A value refused while parsing (NaN, Infinity, a number out of range); the message says which."""


# -- schema -----------------------------------------------------------------------------------------

def _value_schema() -> dict[str, Any]:
    """Any JSON value, with strings, lists and objects size-limited (depth is checked before parsing)."""
    return {"anyOf": [
        {"type": "string", "maxLength": MAX_LONG_TEXT_CHARS},
        {"type": ["number", "boolean", "null"], "x-int64": True},
        {"type": "array", "maxItems": MAX_ITEMS, "items": {"$ref": "#/$defs/value"}},
        {"type": "object", "maxProperties": MAX_KEYS, "propertyNames": {"maxLength": MAX_TEXT_CHARS},
         "additionalProperties": {"$ref": "#/$defs/value"}},
    ]}


#: Short text (names, statuses, dates, dtypes ...) has no control characters but tab and line breaks: an
#: escape sequence in a run name would reach the terminal of whoever lists the runs.
PRINTABLE_PATTERN = "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]*$"
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text(n: int = MAX_TEXT_CHARS) -> dict[str, Any]:
    """Short text: a string or null, at most ``n`` characters, printable; long text (messages,
    tracebacks, which may hold a compiler's colour codes) is only size-limited."""
    if n >= MAX_LONG_TEXT_CHARS:
        return {"type": ["string", "null"], "maxLength": n}
    return {"type": ["string", "null"], "maxLength": n, "pattern": PRINTABLE_PATTERN}


_ID = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS, "pattern": ID_PATTERN}
_NUMBER = {"type": ["number", "null"], "x-int64": True}
_NAMES = {"type": ["array", "null"], "maxItems": MAX_KEYS, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS}}
_NAME_OR_NAMES = {"type": ["string", "array", "null"], "maxLength": MAX_TEXT_CHARS, "maxItems": MAX_KEYS,
                  "items": {"type": "string", "maxLength": MAX_TEXT_CHARS}}
_SIZE = {"type": "integer", "minimum": 1, "x-int64": True}
_SIZE_ENTRY = {"anyOf": [
    _SIZE,
    {"type": "array", "maxItems": 16, "items": _SIZE},
    {"type": "object", "maxProperties": 16, "additionalProperties": _SIZE},
]}

#: The stored sweep a run was started with (``SweepSpec.to_dict``), which ``--resume`` rebuilds.
SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "maxProperties": MAX_KEYS,
    "properties": {
        "kernels": _NAMES, "variants": _NAMES, "backends": _NAMES, "dtypes": _NAMES, "modes": _NAMES,
        "cache": _NAME_OR_NAMES,
        "sizes": {"anyOf": [{"type": ["string", "null"], "maxLength": MAX_TEXT_CHARS},
                            {"type": "array", "maxItems": MAX_KEYS, "items": _SIZE_ENTRY}]},
        "budget_s": {"type": "number", "exclusiveMinimum": 0, "x-int64": True},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "x-int64": True},
        "build_timeout_s": {"type": "number", "exclusiveMinimum": 0, "x-int64": True},
        "warmup_s": {"type": "number", "minimum": 0, "x-int64": True},
        "target_spread": {"type": "number", "exclusiveMinimum": 0, "x-int64": True},
        "min_samples": {"type": "integer", "minimum": 1, "x-int64": True},
        "max_samples": {"type": "integer", "minimum": 1, "x-int64": True},
        "n_inputs": {"type": "integer", "minimum": 1, "x-int64": True},
        "rounds": {"type": "integer", "minimum": 1, "x-int64": True},
        "seed": {"type": "integer", "x-int64": True},
        "suite": _text(), "isolation": _text(),
        "memory_cap": {"type": ["string", "integer", "null"], "maxLength": MAX_TEXT_CHARS, "x-int64": True},
        "llm_shapes": {"type": ["array", "null"], "maxItems": MAX_KEYS,
                       "items": {"type": "object", "maxProperties": 64,
                                 "additionalProperties": {"$ref": "#/$defs/value"}}},
    },
    "additionalProperties": {"$ref": "#/$defs/value"},
}

_RUN_FIELDS: dict[str, Any] = {
    "run_id": _ID,
    "created_at": _text(64), "finished_at": _text(64), "name": _text(), "suite": _text(),
    "status": {"enum": [*RUN_STATUSES, None]},
    "env_id": {"anyOf": [_ID, {"type": "null"}]},
    "git_commit": _text(256),
    "wall_s": {"type": ["number", "null"], "minimum": 0, "x-int64": True},
    # JSON text in a DataFrame-based export, decoded in the store's own: both are accepted, and checked
    "argv": {"anyOf": [_NAMES, {"type": "string", "maxLength": MAX_JSON_TEXT_CHARS}]},
    "spec": {"anyOf": [{"$ref": "#/$defs/spec"}, {"type": "null"},
                       {"type": "string", "maxLength": MAX_JSON_TEXT_CHARS}]},
    "in_flight": {"anyOf": [{"type": ["object", "null"], "maxProperties": 64,
                             "additionalProperties": {"$ref": "#/$defs/value"}},
                            {"type": "string", "maxLength": MAX_TEXT_CHARS}]},
}


def _result_field(name: str, sql_type: str) -> dict[str, Any]:
    if name in ("run_id", "cell_key"):
        return _ID
    if name == "env_id":
        return {"anyOf": [_ID, {"type": "null"}]}
    if name in REQUIRED_TEXT_COLUMNS:
        return {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "pattern": PRINTABLE_PATTERN}
    if name in NON_NEGATIVE_COLUMNS:
        return {"type": ["number", "null"], "minimum": 0, "x-int64": True}
    if name in JSON_COLUMNS:
        return {"type": ["string", "array", "object", "null"], "maxLength": MAX_JSON_TEXT_CHARS,
                "maxItems": MAX_ITEMS, "maxProperties": 64,
                "items": {"type": ["number", "null"], "x-int64": True},
                "additionalProperties": {"type": "integer", "x-int64": True}}
    if sql_type == "TEXT":
        return _text(MAX_LONG_TEXT_CHARS if name in LONG_TEXT_COLUMNS else MAX_TEXT_CHARS)
    if sql_type == "INTEGER":  # counts and flags; a float column written by pandas may say 5.0
        return {"type": ["number", "boolean", "null"], "x-int64": True}
    return _NUMBER


RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["run_id", "cell_key", *REQUIRED_TEXT_COLUMNS],
    "maxProperties": MAX_KEYS,
    "properties": {k: _result_field(k, t) for k, t in RESULT_COLUMNS.items()},
    "additionalProperties": {"$ref": "#/$defs/value"},
}

ENVIRONMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["env_id", "record"],
    "properties": {"env_id": _ID, "record": {"type": "object", "maxProperties": MAX_KEYS,
                                             "additionalProperties": {"$ref": "#/$defs/value"}}},
    "additionalProperties": {"$ref": "#/$defs/value"},
}

PEAK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["env_id", "backend", "metric", "value"],
    "properties": {
        "env_id": _ID,
        "backend": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": PRINTABLE_PATTERN},
        "metric": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": PRINTABLE_PATTERN},
        "dtype": _text(64),
        "value": {"type": "number", "x-int64": True}, "unit": _text(64), "method": _text(),
        "measured_at": _text(64),
        "details": {"anyOf": [{"type": "string", "maxLength": MAX_LONG_TEXT_CHARS},
                              {"type": ["object", "null"], "maxProperties": MAX_KEYS,
                               "additionalProperties": {"$ref": "#/$defs/value"}}]},
    },
    "additionalProperties": {"$ref": "#/$defs/value"},
}

EXPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "version"],
    "properties": {
        "format": {"type": "string", "maxLength": 64},
        "version": {"type": "integer", "minimum": 1, "x-int64": True},
        "exported_at": _text(64),
        "runs": {"type": ["array", "null"], "maxItems": MAX_ITEMS, "items": {
            "type": "object", "required": ["run_id"], "maxProperties": MAX_KEYS, "properties": _RUN_FIELDS,
            "additionalProperties": {"$ref": "#/$defs/value"}}},
        "environments": {"type": ["array", "null"], "maxItems": MAX_ITEMS, "items": ENVIRONMENT_SCHEMA},
        "results": {"type": ["array", "null"], "maxItems": MAX_ITEMS, "items": RESULT_SCHEMA},
        "peaks": {"type": ["array", "null"], "maxItems": MAX_ITEMS, "items": PEAK_SCHEMA},
    },
    "additionalProperties": {"$ref": "#/$defs/value"},
    "$defs": {"value": _value_schema(), "spec": SPEC_SCHEMA},
}


def _int64(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``x-int64``: an integer must fit the store's 64-bit integers (SQLite's), and a float must be finite
    (JSON's 1e999 parses as infinity)."""
    from jsonschema.exceptions import ValidationError

    if wanted and isinstance(instance, int) and not isinstance(instance, bool) and \
            not INT64[0] <= instance <= INT64[1]:
        yield ValidationError(f"integer {_short(instance)} is out of range (at most 2**63-1 in magnitude)")
    if wanted and isinstance(instance, float) and not math.isfinite(instance):
        yield ValidationError("the number is out of range (values must be finite)")


_validator: Any = None


def _export_validator() -> Any:
    global _validator
    if _validator is None:
        from jsonschema import Draft202012Validator, validators

        cls = validators.extend(Draft202012Validator, {"x-int64": _int64})
        cls.check_schema(EXPORT_SCHEMA)
        _validator = cls(EXPORT_SCHEMA)
    return _validator


_row_validator_cache: Any = None


def _row_validator() -> Any:
    """A validator of one result row (:data:`RESULT_SCHEMA`), for rows the fast check does not vouch for."""
    global _row_validator_cache
    if _row_validator_cache is None:
        _row_validator_cache = type(_export_validator())({**RESULT_SCHEMA, "$defs": EXPORT_SCHEMA["$defs"]})
    return _row_validator_cache


_ID_RE = re.compile(ID_PATTERN)


def _plain_number(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1])


def _plain_check(name: str, sql_type: str) -> Any:
    """A predicate that is True only for values :data:`RESULT_SCHEMA` accepts for column ``name`` (it may
    say False for some valid ones: those rows go through jsonschema)."""
    if name in ("run_id", "cell_key", "env_id"):
        nullable = name == "env_id"
        return lambda v: (v is None and nullable) or (isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS
                                                      and _ID_RE.match(v) is not None)
    if name in JSON_COLUMNS:
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_JSON_TEXT_CHARS)
    if name in REQUIRED_TEXT_COLUMNS:
        return lambda v: isinstance(v, str) and 0 < len(v) <= MAX_TEXT_CHARS and _CONTROL.search(v) is None
    if name in NON_NEGATIVE_COLUMNS:
        return lambda v: v is None or (_plain_number(v) and v >= 0)
    if sql_type == "TEXT" and name in LONG_TEXT_COLUMNS:
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_LONG_TEXT_CHARS)
    if sql_type == "TEXT":
        return lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_TEXT_CHARS
                                       and _CONTROL.search(v) is None)
    if sql_type == "INTEGER":
        return lambda v: isinstance(v, bool) or _plain_number(v)
    return _plain_number


_PLAIN = {k: _plain_check(k, t) for k, t in RESULT_COLUMNS.items()}
_REQUIRED_KEYS = ("run_id", "cell_key", *REQUIRED_TEXT_COLUMNS)


def _plain_json_column(key: str, value: Any) -> bool:
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


def _plain_row(row: Any) -> bool:
    """True when ``row`` is an object of known columns, each of a type the schema accepts (the fast path)."""
    if not isinstance(row, dict) or not all(k in row for k in _REQUIRED_KEYS):
        return False
    plain = _PLAIN
    for k, v in row.items():
        check = plain.get(k)
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
    lengths = list(map(len, strs))
    if min(lengths) < min_len or max(lengths) > limit:
        return False
    return not printable or _CONTROL.search("".join(strs)) is None


_IDS = re.compile(rf"(?:[A-Za-z0-9_][A-Za-z0-9_.:+-]{{0,{MAX_ID_CHARS - 1}}}\n)*")


def _plain_ids(values: Sequence[Any], nullable: bool) -> bool:
    """Every value an identifier (:data:`ID_PATTERN`, at most :data:`MAX_ID_CHARS`), by one regular expression
    over them all, one per line."""
    strs = _strings(values, nullable)
    return strs is not None and _IDS.fullmatch("".join(v + "\n" for v in strs)) is not None


def _plain_column(name: str, sql_type: str) -> Any:
    """The column check of :func:`_plain_rows` for ``name``: True only if :func:`_plain_check` would say
    True for every value."""
    if name in ("run_id", "cell_key", "env_id"):
        return lambda vs: _plain_ids(vs, nullable=name == "env_id")
    if name in JSON_COLUMNS:
        return lambda vs: _plain_texts(vs, True, MAX_JSON_TEXT_CHARS, printable=False)
    if name in REQUIRED_TEXT_COLUMNS:
        return lambda vs: _plain_texts(vs, False, MAX_TEXT_CHARS, printable=True, min_len=1)
    if name in NON_NEGATIVE_COLUMNS:
        return lambda vs: _plain_numbers(vs, nullable=True, allow_bool=False, non_negative=True)
    if sql_type == "TEXT":
        long = name in LONG_TEXT_COLUMNS
        return lambda vs: _plain_texts(vs, True, MAX_LONG_TEXT_CHARS if long else MAX_TEXT_CHARS, printable=not long)
    return lambda vs: _plain_numbers(vs, nullable=True, allow_bool=sql_type == "INTEGER", non_negative=False)


_PLAIN_COLUMNS = {k: _plain_column(k, t) for k, t in RESULT_COLUMNS.items()}


def _plain_rows(rows: list[Any]) -> bool:
    """:func:`_plain_row` of every row at once: rows with the same fields are checked a column at a time
    (a row by row check calls a predicate per value: a third of a million-row import). False for any
    doubt: those rows are checked one by one."""
    if not rows or not all(type(r) is dict for r in rows):
        return False
    keys = tuple(rows[0])
    if not all(k in rows[0] for k in _REQUIRED_KEYS) or not all(tuple(r) == keys for r in rows):
        return False
    checks = [_PLAIN_COLUMNS.get(k) for k in keys]
    if None in checks:
        return False
    # the same fields in the same order: the batch turned into its columns in one C-level transposition
    return all(check(values) for check, values in zip(checks, zip(*map(dict.values, rows), strict=True),
                                                                strict=True))


#: Rows checked together by :func:`_plain_rows`.
PLAIN_BATCH_ROWS = 1024


# -- reading --------------------------------------------------------------------------------------

def _short(v: Any, n: int = 60) -> str:
    if isinstance(v, str):
        text = repr(v[:n]) + (f"… ({len(v):,} characters)" if len(v) > n else "")
    elif isinstance(v, (dict, list)):
        text = f"{'an object' if isinstance(v, dict) else 'a list'} of {len(v):,} item(s)"
    elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > 1 << 64:
        text = f"{v:.3g}" if abs(v) < 1e300 else f"an integer of {len(str(abs(v)))} digits"
    else:
        text = repr(v)
    return text if len(text) <= n + 40 else text[:n] + "…"


_TYPE_NAMES = {"integer": "an integer", "number": "a number", "string": "a string", "object": "an object",
               "array": "a list", "boolean": "true or false", "null": "null"}


def _explain(err: Any) -> str:
    """One short line for a jsonschema error (its own message repeats the whole value, which may be huge)."""
    v, want, inst = err.validator, err.validator_value, err.instance
    if v == "type":
        wants = [want] if isinstance(want, str) else list(want)
        return f"{_short(inst)} is not {' or '.join(_TYPE_NAMES.get(t, t) for t in wants)}"
    if v == "maxLength":
        return f"a string of {len(inst):,} characters is longer than the limit of {want:,}"
    if v == "minLength":
        return "must not be empty"
    if v in ("maxItems", "maxProperties"):
        return f"{len(inst):,} items is more than the limit of {want:,}"
    if v == "pattern" and want == PRINTABLE_PATTERN:
        bad = _CONTROL.search(inst)
        return (f"{_short(inst)} holds a control character ({bad.group()!r} at {bad.start()}); names and "
                "other short text must be printable") if bad else err.message[:200]
    if v == "pattern":
        return (f"{_short(inst)} is not an identifier (letters, digits and _ . : + -, not starting with "
                f"a dot or a dash; never a path)")
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return f"{_short(inst)} is out of range (must be {op} {want})"
    if v == "required":
        return err.message[:200]
    if v in ("anyOf", "oneOf") and err.context:
        deepest = max(err.context, key=lambda e: len(e.relative_path))
        if deepest.relative_path:
            return _explain(deepest)
        types = sorted({t for e in err.context if e.validator == "type"
                        for t in ([e.validator_value] if isinstance(e.validator_value, str) else e.validator_value)})
        if types:
            return f"{_short(inst)} is not {' or '.join(_TYPE_NAMES.get(t, t) for t in types)}"
    return err.message[:200]


def _field_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p)[:60])
    return out or "(the document)"


def _check_depth(text: str, where: str, limit: int = MAX_DEPTH) -> None:
    """Refuse nesting deeper than ``limit`` without recursing: escapes, then strings, then everything but
    brackets are removed (regular expressions, linear), and innermost pairs are peeled off level by level."""
    t = re.sub(r"\\.", "", text, flags=re.S)
    t = re.sub(r'"[^"]*"', "", t)
    t = re.sub(r"[^\[\]{}]+", "", t)
    pair = re.compile(r"\[\]|\{\}")
    for _ in range(limit):
        if not t:
            return
        shorter = pair.sub("", t)
        if len(shorter) == len(t):
            return  # unbalanced: the parser says where
        t = shorter
    if t and len(pair.sub("", t)) < len(t):
        raise ValueError(f"{where}: JSON nested more than {limit} levels deep; an export is never that deep "
                         "(is this a workbench export?)")


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows (values must be finite)")


#: One decoder for every JSON text column (``json.loads`` with a keyword builds a decoder per call).
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _json_column_is_plain(key: str, text: str) -> bool:
    """The fast check of one JSON text column of a row (``params``, ``samples_s`` ...): True when the text is
    shallow JSON with nothing around it decoding to a plain value (:func:`_plain_json_column`); anything else
    goes through :func:`_decoded`, which says what is wrong."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return False
    try:
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):  # not JSON, NaN/Infinity, leading whitespace: the slow path says
        return False
    return end == len(text) and _plain_json_column(key, value)


def check_json_columns(row: Mapping[str, Any], i: int, where: str) -> None:
    """Each JSON text column of result row ``i`` decodes to what it must (a ValueError names it otherwise);
    the row keeps the text as it is."""
    for key in JSON_COLUMNS:
        text = row.get(key)
        if isinstance(text, str) and not _json_column_is_plain(key, text):
            _decoded(text, f"results[{i}].{key}", where, key)


def _check_plain_json_columns(rows: list[dict[str, Any]], start: int, where: str) -> None:
    """:func:`check_json_columns` of a batch that passed :func:`_plain_rows` (its JSON columns are text or
    null): each distinct text decoded once (a batch repeats its ``params``); any doubt, row by row."""
    for key in JSON_COLUMNS:
        if key not in rows[0]:
            continue
        texts = {r[key] for r in rows}
        texts.discard(None)
        if not all(_json_column_is_plain(key, text) for text in texts):
            for i, row in enumerate(rows, start):
                check_json_columns(row, i, where)
            return


def parse_json(text: str, where: str) -> Any:
    """JSON text -> value, depth checked first (skipped when the text has too few brackets to be deep); NaN
    and Infinity refused. Numbers are parsed by the C decoder (a Python hook per number cost seconds on a
    large export): an overflowing float (1e999) or an integer beyond 64 bits is refused by the schema's
    ``x-int64`` check, and one of thousands of digits by Python's own limit on integer conversion."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        _check_depth(text, where)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except _Refused as exc:
        raise ValueError(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise ValueError(f"{where}: a number is out of range ({str(exc)[:80]})") from None


def read_text(path: str | os.PathLike, limit: int = MAX_FILE_BYTES) -> str:
    """A file's UTF-8 text; a missing, unreadable, oversized or non-UTF-8 file is an error naming it."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if p.is_dir():
        raise ValueError(f"{p} is a directory; give the JSON file `workbench export` or `report --format json` "
                         "wrote")
    try:
        size = p.stat().st_size
        if size > limit:
            raise ValueError(f"{p}: {size:,} bytes is larger than an export may be ({limit:,} bytes)")
        data = p.read_bytes()
    except PermissionError:
        raise ValueError(f"{p}: permission denied (cannot read it)") from None
    except OSError as exc:
        raise ValueError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); a workbench "
                         "export is UTF-8 JSON") from None


def validate_export(doc: Any, where: str, export_format: str = EXPORT_FORMAT,
                    export_version: int = EXPORT_VERSION) -> dict[str, Any]:
    """Check a parsed export against :data:`EXPORT_SCHEMA`; JSON text fields (``spec``, ``argv``,
    ``in_flight``, ``params``, ``samples_s`` ...) are parsed and checked too, and come back decoded."""
    from jsonschema.exceptions import best_match

    if not isinstance(doc, dict) or doc.get("format") != export_format:
        got = f"format {_short(doc.get('format'))}" if isinstance(doc, dict) else _short(doc)
        raise ValueError(f"{where} is not a workbench results export (format {export_format!r}; got {got}); "
                         "write one with `workbench export` or `workbench report --format json`")
    version = doc.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > export_version:
        raise ValueError(f"{where}: export version {version} is newer than this workbench understands "
                         f"({export_version}); upgrade the workbench to import it")
    results = doc.get("results")
    if isinstance(results, list) and len(results) <= MAX_ITEMS:  # rows one by one: the common ones fast
        head = _export_validator().iter_errors({**doc, "results": []})
        err = best_match(head)
        if err is None:
            rows = _row_validator()
            for start in range(0, len(results), PLAIN_BATCH_ROWS):
                batch = results[start:start + PLAIN_BATCH_ROWS]
                if _plain_rows(batch):
                    continue
                for i, row in enumerate(batch, start):
                    if not _plain_row(row):
                        err = best_match(rows.iter_errors(row))
                        if err is not None:
                            raise ValueError(f"{where}: {_field_path(['results', i, *err.absolute_path])}: "
                                             f"{_explain(err)}")
    else:
        err = best_match(_export_validator().iter_errors(doc))
    if err is not None:
        raise ValueError(f"{where}: {_field_path(err.absolute_path)}: {_explain(err)}")
    for i, run in enumerate(doc.get("runs") or []):
        for key in ("spec", "argv", "in_flight"):
            if isinstance(run.get(key), str):
                run[key] = _decoded(run[key], f"runs[{i}].{key}", where, key)
    run_ids = {r["run_id"] for r in doc.get("runs") or []}
    for i, row in enumerate(doc.get("results") or []):
        if row["run_id"] not in run_ids:
            raise ValueError(f"{where}: results[{i}].run_id: {_short(row['run_id'])} names no run of the file "
                             "(its runs list); an export carries the runs of its rows")
        check_json_columns(row, i, where)  # checked; stored as the text it is
    for i, peak in enumerate(doc.get("peaks") or []):
        if isinstance(peak.get("details"), str):
            details = parse_json(peak["details"], f"{where}: peaks[{i}].details (JSON text)")
            if not isinstance(details, dict):
                raise ValueError(f"{where}: peaks[{i}].details: {_short(details)} is not an object")
            peak["details"] = details
    check_meaning(doc, where)
    return doc


def _differences(a: Mapping[str, Any], b: Mapping[str, Any], keys: Any = None) -> list[str]:
    """The keys whose values differ between ``a`` and ``b`` (a missing key reads as null)."""
    keys = sorted(set(a) | set(b)) if keys is None else keys
    return [k for k in keys if a.get(k) != b.get(k)]


def check_meaning(doc: Mapping[str, Any], where: str) -> None:
    """What the schema cannot say about one file: a run id listed twice with different content, and a
    cell (run, cell_key) listed twice with different values, are contradictions (which one is true?), refused
    naming both places; exact repeats are harmless and imported once."""
    seen_runs: dict[str, int] = {}
    runs = doc.get("runs") or []
    for i, run in enumerate(runs):
        first = seen_runs.setdefault(run["run_id"], i)
        if first != i:
            diff = _differences(runs[first], run)
            if diff:
                raise ValueError(f"{where}: runs[{i}]: run {run['run_id']!r} is listed again (first at "
                                 f"runs[{first}]) with a different {diff[0]}; a run id names one run: fix the file")
    seen_cells: dict[tuple[str, str], int] = {}
    results = doc.get("results") or []
    for i, row in enumerate(results):
        first = seen_cells.setdefault((row["run_id"], row["cell_key"]), i)
        if first != i:
            diff = _differences(results[first], row)
            if diff:
                raise ValueError(f"{where}: results[{i}]: cell {row['cell_key']!r} of run {row['run_id']!r} is "
                                 f"listed again (first at results[{first}]) with a different {diff[0]} "
                                 f"({_short(results[first].get(diff[0]))} then {_short(row.get(diff[0]))}); "
                                 "a cell has one result: fix the file")


#: What each JSON text field must decode to (checked with the same validator).
_DECODED: dict[str, dict[str, Any]] = {
    "spec": {"anyOf": [{"$ref": "#/$defs/spec"}, {"type": "null"}]},
    "argv": _NAMES,
    "in_flight": {"type": ["object", "null"], "maxProperties": 64, "additionalProperties": {"$ref": "#/$defs/value"}},
    "params": {"type": ["object", "null"], "maxProperties": 64, "additionalProperties": _SIZE},
}
_SAMPLES = {"type": ["array", "null"], "maxItems": MAX_ITEMS, "items": {"type": ["number", "null"], "x-int64": True}}


def _decoded(text: str, field: str, where: str, key: str) -> Any:
    from jsonschema.exceptions import best_match

    if key == "in_flight" and not text.strip():
        return None
    value = parse_json(text, f"{where}: {field} (JSON text)")
    if key in JSON_COLUMNS and _plain_json_column(key, value):
        return value
    schema = {**_DECODED.get(key, _SAMPLES), "$defs": EXPORT_SCHEMA["$defs"]}
    err = best_match(type(_export_validator())(schema).iter_errors(value))
    if err is not None:
        inner = _field_path(err.absolute_path)
        raise ValueError(f"{where}: {field}{'' if inner == '(the document)' else ' ' + inner}: {_explain(err)}")
    return value


def load_export(path: str | os.PathLike, export_format: str = EXPORT_FORMAT,
                export_version: int = EXPORT_VERSION) -> dict[str, Any]:
    """Read and validate an export file; every problem is a ValueError (FileNotFoundError when it is
    missing) whose message names the file and, for a bad field, its path in the document. A file of
    :data:`workbench.store.import_stream.STREAM_FROM_BYTES` or more is validated row by row and its ``results``
    come back as :class:`workbench.store.import_stream.StreamedRows` (read again from the file when iterated)."""
    where = str(path)
    p = Path(path)
    if p.is_file() and p.stat().st_size >= STREAM_FROM_BYTES:
        return _load_streamed(p, where, export_format, export_version)
    doc = parse_json(read_text(path), where)
    return validate_export(doc, where, export_format, export_version)


#: The largest export read row by row (its memory no longer grows with the file; MAX_ITEMS caps the rows).
MAX_STREAMED_FILE_BYTES = 4 << 30


def _depth_checker(where: str) -> Any:
    """The depth check of :func:`workbench.store.import_stream.iter_export`: one value's span of the buffer."""
    def check(buf: str, start: int, end: int) -> None:
        if buf.count("[", start, end) + buf.count("{", start, end) > MAX_DEPTH:
            _check_depth(buf[start:end], where)
    return check


def _load_streamed(p: Path, where: str, export_format: str, export_version: int) -> dict[str, Any]:
    """:func:`load_export` of a large file: the same checks, a batch of rows at a time (see
    :mod:`workbench.store.import_stream`); the checked rows are spooled as the store will insert them."""
    size = p.stat().st_size
    if size > MAX_STREAMED_FILE_BYTES:
        raise ValueError(f"{p}: {size:,} bytes is larger than an export may be ({MAX_STREAMED_FILE_BYTES:,} bytes)")
    if not os.access(p, os.R_OK):
        raise ValueError(f"{p}: permission denied (cannot read it)")
    if not is_workbench_export(p):  # the format is written first: a stranger is refused before its rows
        raise ValueError(f"{where} is not a workbench results export (format {export_format!r}); write one with "
                         "`workbench export` or `workbench report --format json`")
    head: dict[str, Any] = {}
    first_of_cell: dict[str, int] = {}
    first_of_run: dict[str, int] = {}
    env_ids: set[str] = set()
    repeats: dict[int, list[tuple[int, str, str, str]]] = {}
    spool = ValueSpool()
    try:
        count = _check_streamed_rows(p, where, head, spool, first_of_cell, first_of_run, env_ids, repeats)
        if repeats:
            _check_repeats(p, where, repeats)
        doc = validate_export(head, where, export_format, export_version)
        run_ids = {r["run_id"] for r in doc.get("runs") or []}
        orphans = sorted((i, r) for r, i in first_of_run.items() if r not in run_ids)
        if orphans:
            i, r = orphans[0]
            raise ValueError(f"{where}: results[{i}].run_id: {_short(r)} names no run of the file (its runs list); "
                             "an export carries the runs of its rows")
    except BaseException:
        spool.close()
        raise
    doc["results"] = StreamedRows(p, count, env_ids, spool)
    return doc


def _check_streamed_rows(p: Path, where: str, head: dict[str, Any], spool: ValueSpool,
                         first_of_cell: dict[str, int], first_of_run: dict[str, int], env_ids: set[str],
                         repeats: dict[int, list[tuple[int, str, str, str]]]) -> int:
    """The row checks of :func:`_load_streamed`, a batch at a time; each checked batch goes to ``spool``.
    Returns the number of rows."""
    from jsonschema.exceptions import best_match

    count = 0
    rows = iter_export(p, where, head, _refuse_constant, _depth_checker(where))
    while batch := list(itertools.islice(rows, PLAIN_BATCH_ROWS)):
        if count + len(batch) > MAX_ITEMS:
            raise ValueError(f"{where}: results: more than {MAX_ITEMS:,} rows is more than an export may hold")
        plain = _plain_rows(batch)  # the usual batch: every field plain, checked a column at a time
        if plain:
            _check_plain_json_columns(batch, count, where)
        for i, row in enumerate(batch, count):
            if not plain and not _plain_row(row):
                err = best_match(_row_validator().iter_errors(row))
                if err is not None:
                    raise ValueError(f"{where}: {_field_path(['results', i, *err.absolute_path])}: {_explain(err)}")
            if not plain:
                check_json_columns(row, i, where)
            first = first_of_cell.setdefault(f"{row['run_id']}\0{row['cell_key']}", i)
            if first != i:  # compared with the first in one more pass, by digest (no rows kept in memory)
                repeats.setdefault(first, []).append((i, _digest(row), row["run_id"], row["cell_key"]))
            first_of_run.setdefault(row["run_id"], i)
            if row.get("env_id"):
                env_ids.add(row["env_id"])
        spool.add(batch, plain)
        count += len(batch)
    return count


def _digest(row: Mapping[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()


def _check_repeats(p: Path, where: str, repeats: Mapping[int, list[tuple[int, str, str, str]]]) -> None:
    """Cells listed again: each the same as where it was first listed (harmless), or refused."""
    last = max(repeats)
    for j, earlier in enumerate(iter_export(p, where, {}, _refuse_constant, lambda _buf, _start, _end: None)):
        for i, digest, run_id, cell_key in repeats.get(j, ()):
            if digest != _digest(earlier):
                raise ValueError(f"{where}: results[{i}]: cell {cell_key!r} of run {run_id!r} is listed again "
                                 f"(first at results[{j}]) with different values; a cell has one result: fix the "
                                 "file")
        if j >= last:
            return


def records(doc: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """A validated document's list ``key`` (missing or null: empty)."""
    return list(doc.get(key) or [])

"""What an export may hold, as data: the JSON Schema of ``workbench export``'s document and its limits.

Why limits everywhere: an export comes from another machine, so every string, list and object has a size
limit, identifiers (run, environment, cell ids) are short and can never become a path, and every field of the
store's tables has a type. :mod:`workbench.store.import_schema` reads a file against this schema;
:mod:`workbench.store.plain_rows` is its fast path for the usual rows, and keeps to the same limits.
"""

from __future__ import annotations

import re

from workbench.core.record import JSON_COLUMNS, RESULT_COLUMNS, TIMING_MODES, JsonObject
from workbench.store.schema import RUN_STATUSES

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

#: Result columns that hold one of a few names: a row's time is one of the four timing modes, or unknown (None).
ENUM_COLUMNS: dict[str, tuple[str, ...]] = {"timing_mode": TIMING_MODES}


def _value_schema() -> JsonObject:
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
CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text(n: int = MAX_TEXT_CHARS) -> JsonObject:
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
SPEC_SCHEMA: JsonObject = {
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

#: What each run records of the code it measured (:mod:`workbench.history.provenance`): per catalog folder,
#: its repository's commit and dirty state, or why they are unknown.
CODE_COMMITS_SCHEMA: JsonObject = {
    "type": ["array", "null"], "maxItems": 256,
    "items": {"type": "object", "maxProperties": 16,
              "properties": {"catalog": _text(), "repo": _text(), "commit": _text(256), "dirty": {"type": "boolean"},
                             "reason": _text()},
              "additionalProperties": {"$ref": "#/$defs/value"}},
}

_RUN_FIELDS: dict[str, JsonObject] = {
    "run_id": _ID,
    "created_at": _text(64), "finished_at": _text(64), "name": _text(), "suite": _text(),
    "status": {"enum": [*RUN_STATUSES, None]},  # ``running`` is imported as ``interrupted``
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
    "tag": _text(), "workbench_version": _text(64),
    "code_commits": {"anyOf": [{"$ref": "#/$defs/code_commits"},
                               {"type": "string", "maxLength": MAX_JSON_TEXT_CHARS}]},
}


def _result_field(name: str, sql_type: str) -> JsonObject:
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
    if name in ENUM_COLUMNS:
        return {"enum": [*ENUM_COLUMNS[name], None]}
    if sql_type == "TEXT":
        return _text(MAX_LONG_TEXT_CHARS if name in LONG_TEXT_COLUMNS else MAX_TEXT_CHARS)
    if sql_type == "INTEGER":  # counts and flags; a float column written by pandas may say 5.0
        return {"type": ["number", "boolean", "null"], "x-int64": True}
    return _NUMBER


RESULT_SCHEMA: JsonObject = {
    "type": "object",
    "required": ["run_id", "cell_key", *REQUIRED_TEXT_COLUMNS],
    "maxProperties": MAX_KEYS,
    "properties": {k: _result_field(k, t) for k, t in RESULT_COLUMNS.items()},
    "additionalProperties": {"$ref": "#/$defs/value"},
}

ENVIRONMENT_SCHEMA: JsonObject = {
    "type": "object",
    "required": ["env_id", "record"],
    "properties": {"env_id": _ID, "record": {"type": "object", "maxProperties": MAX_KEYS,
                                             "additionalProperties": {"$ref": "#/$defs/value"}}},
    "additionalProperties": {"$ref": "#/$defs/value"},
}

PEAK_SCHEMA: JsonObject = {
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

EXPORT_SCHEMA: JsonObject = {
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
    "$defs": {"value": _value_schema(), "spec": SPEC_SCHEMA, "code_commits": CODE_COMMITS_SCHEMA},
}


#: What each JSON text field must decode to (checked with the same validator).
DECODED_SCHEMAS: dict[str, JsonObject] = {
    "spec": {"anyOf": [{"$ref": "#/$defs/spec"}, {"type": "null"}]},
    "argv": _NAMES,
    "code_commits": {"$ref": "#/$defs/code_commits"},
    "in_flight": {"type": ["object", "null"], "maxProperties": 64, "additionalProperties": {"$ref": "#/$defs/value"}},
    "params": {"type": ["object", "null"], "maxProperties": 64, "additionalProperties": _SIZE},
}
#: What a JSON text column of samples (``samples_s`` ...) must decode to.
SAMPLES_SCHEMA: JsonObject = {"type": ["array", "null"], "maxItems": MAX_ITEMS,
                              "items": {"type": ["number", "null"], "x-int64": True}}

"""What ``workbench import`` accepts: :func:`load_export` reads a file against the export schema
(:mod:`workbench.store.export_schema`) and what the schema cannot say.

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

import collections
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from workbench.core.output_guard import is_workbench_export
from workbench.core.record import JSON_COLUMNS, Json, JsonObject
from workbench.core.regular_files import read_regular_bytes
from workbench.store import fast_json, import_stream
from workbench.store.export_schema import (
    CONTROL_CHARS,
    DECODED_SCHEMAS,
    EXPORT_SCHEMA,
    INT64,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_ITEMS,
    PRINTABLE_PATTERN,
    RESULT_SCHEMA,
    SAMPLES_SCHEMA,
)
from workbench.store.import_stream import RowSink, RowText, StreamedRows, fewer_gc_passes, iter_export, row_texts
from workbench.store.plain_rows import (
    PLAIN_BATCH_ROWS,
    FieldGroup,
    next_batch_rows,
    plain_groups,
    plain_json_column,
    plain_number_lists,
    plain_row,
    plain_rows,
)
from workbench.store.schema import EXPORT_FORMAT, EXPORT_VERSION

#: A validated export: JSON, except that a large file's ``results`` are :class:`StreamedRows` (the rows went to
#: the caller's sink as they were checked).
LoadedExport = dict[str, Json | StreamedRows]


class _Refused(ValueError):
    """A value refused while parsing (NaN, Infinity, a number out of range); the message says which."""


# -- validators -----------------------------------------------------------------------------------

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
        bad = CONTROL_CHARS.search(inst)
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


def _refuse_constant(name: str) -> NoReturn:
    raise _Refused(f"{name} is not a number JSON allows (values must be finite)")


def _json_column_is_plain(key: str, text: str) -> bool:
    """The fast check of one JSON text column of a row (``params``, ``samples_s`` ...): True when the text is
    shallow JSON with nothing around it decoding to a plain value (:func:`plain_json_column`); anything else
    goes through :func:`_decoded`, which says what is wrong."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return False
    try:
        value = fast_json.loads(text)  # orjson: several times json's speed on a row's hundreds of samples
    except (ValueError, RecursionError):  # not JSON, NaN/Infinity, a lone surrogate: the slow path says
        return False
    return plain_json_column(key, value) and _within_int64(value)


def _within_int64(value: Any) -> bool:
    """No number of a decoded column at or beyond 2**63 in magnitude: orjson reads an integer of more than 64
    bits as a float, which the schema's ``x-int64`` refuses as the integer it is (the slow path decodes it so)."""
    if isinstance(value, dict):
        value = list(value.values())
    if not value:
        return True
    return max(value) < 2.0 ** 63 and min(value) > -2.0 ** 63


def check_json_columns(row: Mapping[str, Any], i: int, where: str) -> None:
    """Each JSON text column of result row ``i`` decodes to what it must (a ValueError names it otherwise);
    the row keeps the text as it is."""
    for key in JSON_COLUMNS:
        text = row.get(key)
        if isinstance(text, str) and not _json_column_is_plain(key, text):
            _decoded(text, f"results[{i}].{key}", where, key)


def _check_plain_json_columns(rows: list[JsonObject], groups: list[FieldGroup], start: int, where: str) -> None:
    """:func:`check_json_columns` of a batch that passed :func:`plain_groups` (its JSON columns are text or
    null; ``groups``: its columns): each distinct text decoded once (a batch repeats its ``params``); any
    doubt, row by row."""
    for key in JSON_COLUMNS:
        # rows of other fields: a key may be missing from some; params repeat (each decoded once), samples do not
        # (hashing a batch's 4 KB sample texts into a set cost more than it saved)
        columns = [c for c in (g.column(key) for g in groups) if c is not None]
        texts = list({t for c in columns for t in c if t is not None}) if key == "params" else [
            t for c in columns for t in c if t is not None]
        if key != "params" and plain_number_lists(texts):  # samples and the like: judged a list at a time
            continue
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
    # a regular file only (/dev/zero or a FIFO is refused, never read), and never more than ``limit`` bytes
    data = read_regular_bytes(p, limit, what="export")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); a workbench "
                         "export is UTF-8 JSON") from None


def _specs_once(runs: Any) -> Any:
    """``runs`` with each run's ``spec`` that an earlier run has too (the same JSON) left out, for the schema
    check: a sweep's spec is 14 KB that jsonschema walks in 25 ms, and the runs of one suite repeat it (100
    runs: 2.5 s of a million-row import). A spec's check does not depend on its run, so the first run that
    has it is checked and named in an error."""
    if not isinstance(runs, list):
        return runs
    seen: set[str] = set()
    out = []
    for run in runs:
        spec = run.get("spec") if isinstance(run, dict) else None
        if isinstance(spec, (dict, list, str)):
            key = json.dumps(spec, sort_keys=True)  # decoded JSON: depth checked, keys text, numbers finite
            if key in seen:
                run = {**run, "spec": None}
            seen.add(key)
        out.append(run)
    return out


def validate_export(doc: Any, where: str, export_format: str = EXPORT_FORMAT,
                    export_version: int = EXPORT_VERSION) -> JsonObject:
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
        head = _export_validator().iter_errors({**doc, "results": [], "runs": _specs_once(doc.get("runs"))})
        err = best_match(head)
        if err is None:
            rows = _row_validator()
            for start in range(0, len(results), PLAIN_BATCH_ROWS):
                batch = results[start:start + PLAIN_BATCH_ROWS]
                if plain_rows(batch):
                    continue
                for i, row in enumerate(batch, start):
                    if not plain_row(row):
                        err = best_match(rows.iter_errors(row))
                        if err is not None:
                            raise ValueError(f"{where}: {_field_path(['results', i, *err.absolute_path])}: "
                                             f"{_explain(err)}")
    else:
        err = best_match(_export_validator().iter_errors(doc))
    if err is not None:
        raise ValueError(f"{where}: {_field_path(err.absolute_path)}: {_explain(err)}")
    for i, run in enumerate(doc.get("runs") or []):
        for key in ("spec", "argv", "in_flight", "code_commits"):
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


def _decoded(text: str, field: str, where: str, key: str) -> Any:
    from jsonschema.exceptions import best_match

    if key == "in_flight" and not text.strip():
        return None
    value = parse_json(text, f"{where}: {field} (JSON text)")
    if key in JSON_COLUMNS and plain_json_column(key, value):
        return value
    schema = {**DECODED_SCHEMAS.get(key, SAMPLES_SCHEMA), "$defs": EXPORT_SCHEMA["$defs"]}
    err = best_match(type(_export_validator())(schema).iter_errors(value))
    if err is not None:
        inner = _field_path(err.absolute_path)
        raise ValueError(f"{where}: {field}{'' if inner == '(the document)' else ' ' + inner}: {_explain(err)}")
    return value


def load_export(path: str | os.PathLike, export_format: str = EXPORT_FORMAT,
                export_version: int = EXPORT_VERSION, sink: RowSink | None = None) -> LoadedExport:
    """Read and validate an export file; every problem is a ValueError (FileNotFoundError when it is
    missing) whose message names the file and, for a bad field, its path in the document. A file of
    :data:`workbench.store.import_stream.STREAM_FROM_BYTES` or more (:func:`is_streamed`) is validated row by
    row: each checked batch of rows goes to ``sink`` (the import's insert, in a transaction rolled back when a
    later check fails; None: checked only), and ``results`` comes back as
    :class:`workbench.store.import_stream.StreamedRows` (their count and environments)."""
    where = str(path)
    p = Path(path)
    if is_streamed(p):
        return _load_streamed(p, where, export_format, export_version, sink)
    doc = parse_json(read_text(path), where)
    return validate_export(doc, where, export_format, export_version)


def is_streamed(path: str | os.PathLike) -> bool:
    """Whether :func:`load_export` reads ``path`` row by row (a regular file that large)."""
    p = Path(path)
    return p.is_file() and p.stat().st_size >= import_stream.STREAM_FROM_BYTES  # read when called: a test lowers it


def check_streamable(p: Path, where: str, export_format: str = EXPORT_FORMAT) -> None:
    """The checks of a large file that need none of its rows: its size, that it is readable, and that it
    says it is a workbench export (the format is written first: a stranger is refused before its rows)."""
    size = p.stat().st_size
    if size > MAX_STREAMED_FILE_BYTES:
        raise ValueError(f"{p}: {size:,} bytes is larger than an export may be ({MAX_STREAMED_FILE_BYTES:,} bytes)")
    if not os.access(p, os.R_OK):
        raise ValueError(f"{p}: permission denied (cannot read it)")
    if not is_workbench_export(p):
        raise ValueError(f"{where} is not a workbench results export (format {export_format!r}); write one with "
                         "`workbench export` or `workbench report --format json`")


#: The largest export read row by row (its memory no longer grows with the file; MAX_ITEMS caps the rows).
#: Real rows carry their samples, host samples and round medians: a quick suite's rows average 5.5 KB (up to
#: 12 KB), so a million of them (MAX_ITEMS) take 5.3 GB; 4 GiB refused them (issue 38).
MAX_STREAMED_FILE_BYTES = 16 << 30


def _depth_checker(where: str) -> Callable[[str, int, int], None]:
    """The depth check of :func:`workbench.store.import_stream.iter_export`: one value's span of the buffer."""
    def check(buf: str, start: int, end: int) -> None:
        if buf.count("[", start, end) + buf.count("{", start, end) > MAX_DEPTH:
            _check_depth(buf[start:end], where)
    return check


def _load_streamed(p: Path, where: str, export_format: str, export_version: int,
                   sink: RowSink | None) -> LoadedExport:
    """:func:`load_export` of a large file: the same checks, a batch of rows at a time (see
    :mod:`workbench.store.import_stream`); each checked batch goes to ``sink``."""
    check_streamable(p, where, export_format)
    head: JsonObject = {}
    first_of_cell: dict[str, int] = {}
    first_of_run: dict[str, int] = {}
    env_ids: set[str] = set()
    repeats: dict[int, list[tuple[int, str, str, str]]] = {}
    with fewer_gc_passes():
        count = _check_streamed_rows(p, where, head, sink, first_of_cell, first_of_run, env_ids, repeats)
    if repeats:
        _check_repeats(p, where, repeats)
    doc = validate_export(head, where, export_format, export_version)
    run_ids = {r["run_id"] for r in doc.get("runs") or []}
    orphans = sorted((i, r) for r, i in first_of_run.items() if r not in run_ids)
    if orphans:
        i, r = orphans[0]
        raise ValueError(f"{where}: results[{i}].run_id: {_short(r)} names no run of the file (its runs list); "
                         "an export carries the runs of its rows")
    doc["results"] = StreamedRows(p, count, env_ids)
    return doc


def _check_streamed_rows(p: Path, where: str, head: JsonObject, sink: RowSink | None,
                         first_of_cell: dict[str, int], first_of_run: dict[str, int], env_ids: set[str],
                         repeats: dict[int, list[tuple[int, str, str, str]]]) -> int:
    """The row checks of :func:`_load_streamed`, a batch at a time; each checked batch goes to ``sink``.
    Returns the number of rows."""
    from jsonschema.exceptions import best_match

    count = 0
    texts: list[RowText] = []
    rows = iter_export(p, where, head, _refuse_constant, _depth_checker(where), texts)
    size = PLAIN_BATCH_ROWS
    while batch := list(itertools.islice(rows, size)):
        if count + len(batch) > MAX_ITEMS:
            raise ValueError(f"{where}: results: more than {MAX_ITEMS:,} rows is more than an export may hold")
        groups = plain_groups(batch)  # the usual batch: every field plain, checked a column at a time
        if groups is None:  # rows orjson decoded, decoded again as the standard library does (big integers, depth)
            split: dict[str, list[str]] = {}
            batch = [row if text is None else _row_again(text, where, i, split)
                     for i, (row, text) in enumerate(zip(batch, texts, strict=True), count)]
        texts.clear()
        all_new = False
        if groups is not None:
            _check_plain_json_columns(batch, groups, count, where)
            all_new = _note_plain_cells(groups, count, first_of_cell, first_of_run, env_ids)
        else:
            for i, row in enumerate(batch, count):
                if not plain_row(row):
                    err = best_match(_row_validator().iter_errors(row))
                    if err is not None:
                        raise ValueError(f"{where}: {_field_path(['results', i, *err.absolute_path])}: "
                                         f"{_explain(err)}")
                check_json_columns(row, i, where)
        if groups is None or not all_new:  # a cell listed again: row by row
            _note_cells(batch, count, first_of_cell, first_of_run, env_ids, repeats)
        if sink is not None:
            sink(batch, groups, count)
        count += len(batch)
        size = next_batch_rows(groups, len(batch), PLAIN_BATCH_ROWS)
    return count


def _cell_key(run_id: str, cell_key: str) -> str:
    return f"{run_id}\0{cell_key}"


def _note_cells(batch: list[JsonObject], start: int, first_of_cell: dict[str, int], first_of_run: dict[str, int],
                env_ids: set[str], repeats: dict[int, list[tuple[int, str, str, str]]]) -> None:
    """Each row's cell, run and environment noted (the first place of each), row by row; a cell listed again
    goes to ``repeats``, to be compared with where it was first listed."""
    for i, row in enumerate(batch, start):
        first = first_of_cell.setdefault(_cell_key(row["run_id"], row["cell_key"]), i)
        if first != i:  # compared with the first in one more pass, by digest (no rows kept in memory)
            repeats.setdefault(first, []).append((i, _digest(row), row["run_id"], row["cell_key"]))
        first_of_run.setdefault(row["run_id"], i)
        if row.get("env_id"):
            env_ids.add(row["env_id"])


def _note_plain_cells(groups: list[FieldGroup], start: int, first_of_cell: dict[str, int],
                      first_of_run: dict[str, int], env_ids: set[str]) -> bool:
    """:func:`_note_cells` of a plain batch, a column at a time (``setdefault`` mapped in C, no Python step
    per row). Returns whether every cell was new: False for a cell listed again (then the caller notes the
    batch again row by row, which finds it)."""
    before, n = len(first_of_cell), 0
    for g in groups:
        places = [start + i for i in g.members]
        run_ids = g.column("run_id") or ()
        collections.deque(map(first_of_cell.setdefault, map(_cell_key, run_ids, g.column("cell_key") or ()),
                              places), maxlen=0)
        collections.deque(map(first_of_run.setdefault, run_ids, places), maxlen=0)
        env_ids.update(g.column("env_id") or ())
        n += len(places)
    env_ids.discard(None)  # type: ignore[arg-type]  # a row without an environment names none
    env_ids.discard("")
    return len(first_of_cell) - before == n


def _row_again(text: str | tuple[str, int], where: str, i: int, split: dict[str, list[str]]) -> Any:
    """Row ``i`` decoded from its text by the standard library, depth checked first (see
    :func:`workbench.store.import_stream.iter_export`'s ``texts``); a row decoded with others (a chunk and its
    place there) is found in its chunk, split once (``split``)."""
    if isinstance(text, tuple):
        chunk, k = text
        if chunk not in split:
            _depth_checker(where)(chunk, 0, len(chunk))  # before the standard library recurses into it
            try:
                split[chunk] = row_texts(chunk)
            except ValueError as exc:
                raise ValueError(f"{where}: results[{i}]: {exc}") from None
        text = split[chunk][k]
    _depth_checker(where)(text, 0, len(text))
    return parse_json(text, f"{where}: results[{i}]")


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

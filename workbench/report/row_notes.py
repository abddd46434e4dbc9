"""Per-row notes of a report: noise, % of ceiling and the ceiling in words, for tables and key findings alike."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from workbench.core.frames import none_columns, records
from workbench.core.record import JsonObject, RowDict
from workbench.core.status import Status
from workbench.roofs.ceilings import headline_pct, is_compute_bound, is_noisy, llc_of, noise_text, row_peak_note
from workbench.roofs.model import ROWS_METHOD, SHORT_SOURCE, RoofKey, RoofSet, resolve_roofs, roofs_of_row


def fmt_num(x: Any, digits: int = 3) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if not math.isfinite(x) else f"{x:.{digits}g}"


def value_of(row: Any, col: str) -> float | None:
    """A row's column as a finite float; None for a missing or non-numeric one."""
    v = row.get(col) if hasattr(row, "get") else None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def text_of(v: Any) -> str:
    """A value as text; "" for None and NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def exec_cache_text(value: Any) -> str:
    """A block variant's execution-cache statistics (the row's ``exec_cache`` JSON) in words; "" for none."""
    import json

    text = text_of(value)
    try:
        s = json.loads(text) if text else None
    except ValueError:
        return ""
    if not isinstance(s, dict):
        return ""
    mode = s.get("mode")
    if mode != s.get("requested"):
        mode = f"{mode} (fell back from {s.get('requested')})"
    return (f"cache: {mode}, recorded in {fmt_num(s.get('record_s'))} s, {s.get('shape_hits')} hits on this shape"
            f" | cache {s.get('size')} shapes: {s.get('hits')} hits, {s.get('misses')} misses, "
            f"{s.get('recordings')} recordings, fusion {s.get('fusion_successes')}/{s.get('fusion_attempts')}, "
            f"{s.get('fallbacks')} fallbacks")




#: Rows read as dicts at a time (a dict of every column per row, for a million rows at once, took gigabytes;
#: 20,000 rows' dicts were 50 MB).
NOTES_CHUNK_ROWS = 5_000


def _record_chunks(df: pd.DataFrame) -> Iterator[list[RowDict]]:
    """The rows as dicts, a chunk at a time, without the columns that are None throughout (the notes read rows
    by ``.get``, which reads a missing key as None: 28 of 52 columns of a 1M-row store, a third of this
    function's time)."""
    empty = none_columns(df)
    columns = [c for c in df.columns if c not in empty]
    for start in range(0, len(df), NOTES_CHUNK_ROWS):
        yield records(df.iloc[start:start + NOTES_CHUNK_ROWS], columns)


def _ceiling_text(ok: bool, compute: bool, value: float | None, src: str, rs: RoofSet | None, dtype: str) -> str:
    """The ceiling a row was scored against in words, or which one is missing ("" for a row not ok)."""
    unit = "GFLOP/s" if compute else "GB/s"
    if not ok:
        return ""
    if value is None:  # the roof it would have been scored against, and why it is missing
        missing = rs.for_row("compute-bound" if compute else "memory-bound", dtype).missing if rs is not None else None
        return f"none: {missing or f'no {unit} ceiling measured'}"
    level = rs.level_of(value) if rs is not None and not compute else None
    # the level by name, DRAM too (03 printed "194 GB/s (probe)" beside "142 GB/s (probe)" and left the reader to
    # guess which was L2 and which the LLC); a roof known only from the rows' own ceilings has no known level
    at = f", {level.kind.short}" if level is not None and level.method != ROWS_METHOD else ""
    return f"{fmt_num(value)} {unit} ({SHORT_SOURCE.get(src, src)}{at})"


#: The notes of a row, in :func:`row_notes`' column order.
NOTE_COLUMNS = ["noisy", "noise_note", "peak_note", "pct", "ceiling", "ceiling_source", "exec_cache"]


class RowNotes(TypedDict):
    """The notes of one row, by :data:`NOTE_COLUMNS` (see :func:`row_notes`)."""

    noisy: bool
    noise_note: str
    peak_note: str
    pct: float | None
    ceiling: str
    ceiling_source: str
    exec_cache: str


class _Notes:
    """The notes of one row after another: what depends on a few of a row's fields is worked out once per
    distinct combination (most rows of a large report repeat a few: per row, these were a third of a
    1M-row report's notes), and each distinct note is held once."""

    def __init__(self, environments: Mapping[str, JsonObject] | None, roofs: Mapping[RoofKey, RoofSet]) -> None:
        self.environments, self.roofs = environments, roofs
        self.shared: dict[str, str] = {}
        self.ceilings: dict[tuple[Any, ...], str] = {}
        self.caches: dict[tuple[Any, ...], float | None] = {}

    def __call__(self, r: Mapping[str, Any]) -> tuple[bool, str, str, float | None, str, str, str]:
        ok = r.get("status") == Status.OK
        noisy = ok and is_noisy(r)
        compute = is_compute_bound(r)
        value = value_of(r, "ceiling_gflops" if compute else "ceiling_gbps")
        src = text_of(r.get("ceiling_source"))
        rs = roofs_of_row(self.roofs, r)
        key = (ok, compute, value, src, id(rs), text_of(r.get("dtype")) if value is None else "")
        ceiling = self.ceilings.get(key)
        if ceiling is None:
            ceiling = self.ceilings[key] = _ceiling_text(ok, compute, value, src, rs, key[-1])
        if ok:
            where = (r.get("env_id"), r.get("backend"), r.get("device"))
            if where not in self.caches:
                self.caches[where] = llc_of(self.environments, r)
            note = row_peak_note(r, self.caches[where], rs)
        else:
            note = ""
        cache = r.get("exec_cache")
        return (bool(noisy), noise_text(r) if noisy else "", self.shared.setdefault(note, note),
                headline_pct(r) if ok else None, ceiling, src if ok and value is not None else "",
                exec_cache_text(cache) if cache is not None else "")


def row_notes(df: pd.DataFrame, environments: Mapping[str, JsonObject] | None = None,
              roofs: Mapping[RoofKey, RoofSet] | None = None) -> pd.DataFrame:
    """Per row: ``noisy``, ``noise_note``, ``peak_note`` (worked out from the row's rates and its device's
    roofs, ``roofs``: default :func:`workbench.roofs.model.resolve_roofs` of the rows themselves), ``pct`` (the % of
    the ceiling that bounds the row: bandwidth for memory-bound kernels, never the other instead),
    ``ceiling`` (that ceiling in words, or which one is missing) and ``exec_cache`` (a block variant's
    execution-cache statistics, in words). Rows are read as plain dicts (a row Series costs ten times one:
    most of this function's time on a large report)."""
    notes = _Notes(environments, resolve_roofs(df) if roofs is None else roofs)
    if df.empty:
        return pd.DataFrame([], columns=NOTE_COLUMNS, index=df.index)
    columns: list[list[Any]] = [[] for _ in NOTE_COLUMNS]
    pct: list[np.ndarray] = []
    for chunk in _record_chunks(df):
        for j, values in enumerate(zip(*map(notes, chunk), strict=True)):
            if j == _PCT:  # no float object per row kept: interleaved with each chunk's dicts, they kept a
                pct.append(np.array(values, dtype=float))  # million rows' garbage from going back to the OS
            else:
                columns[j].extend(values)
    pcts = np.concatenate(pct)
    # all None stays an object column of None, as a frame of the rows' tuples had it
    columns[_PCT] = pcts if not np.isnan(pcts).all() else np.full(len(pcts), None, dtype=object)
    return pd.DataFrame(dict(zip(NOTE_COLUMNS, columns, strict=True)), columns=NOTE_COLUMNS, index=df.index)


_PCT = NOTE_COLUMNS.index("pct")


def one_row_notes(row: pd.Series, environments: Mapping[str, JsonObject] | None = None,
                  roofs: Mapping[RoofKey, RoofSet] | None = None) -> RowNotes:
    """:func:`row_notes` of one row (a Series, as a frame's row reads), as a dict: a one-row frame cost
    milliseconds a row to build and read back (a report's key findings read 1,500 rows so)."""
    if roofs is None:
        roofs = resolve_roofs(row.to_frame().T)
    noisy, noise_note, peak_note, pct, ceiling, source, cache = _Notes(environments, roofs)(row.to_dict())
    return RowNotes(noisy=noisy, noise_note=noise_note, peak_note=peak_note, pct=pct, ceiling=ceiling,
                    ceiling_source=source, exec_cache=cache)

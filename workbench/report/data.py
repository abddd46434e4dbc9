"""What a report is made from: the rows of some runs and, from a store, their run and environment records
and the measured peaks; and the checks on what a user asked for (run ids, the baseline)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.core.record import RESULT_COLUMNS, JsonObject
from workbench.core.status import Status
from workbench.report.styles import parse_baseline, series_key
from workbench.report.thin_samples import thin_samples
from workbench.store.run_names import resolve_run

#: Record columns no section of the HTML/Markdown report reads: left in the store when a report loads a
#: store's rows (a million rows of all ~76 columns passed 1 GB), kept by exports, which write every column.
#: (load_avg_1m and other_cpu_share are read: a disturbed comparison says what disturbed it.)
NOT_IN_REPORT = frozenset({
    "timer_overhead_s", "host_samples_s", "n_samples", "mean_s", "min_s", "host_median_s", "tolerance",
    "finished_at", "setup_s", "first_call_s", "warmup_calls", "calls_per_sample", "n_inputs", "stopped_by", "seed",
    "other_cpu_s", "steal_s", "cpu_freq_mhz", "gpu_clock_mhz", "gpu_temp_c",
    "gpu_throttle", "tuned_config"})
#: The record columns a report loads from a store (and every extra field).
REPORT_COLUMNS = [c for c in RESULT_COLUMNS if c not in NOT_IN_REPORT]


@dataclass
class ReportData:
    """Everything a report shows: rows, run records, environment records and measured peaks."""

    df: pd.DataFrame
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    environments: dict[str, JsonObject] = field(default_factory=dict)
    peaks: pd.DataFrame = field(default_factory=pd.DataFrame)
    run_ids: list[str] = field(default_factory=list)


def resolve_run_ids(store_or_df: Any, run_ids: str | Iterable[str] | None) -> list[str] | None:
    """Run ids as given, with ``latest`` replaced; unknown ids raise ValueError naming the valid ones."""
    if run_ids is None:
        return None
    wanted = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    if not wanted:
        return None
    known = known_run_ids(store_or_df)
    latest = None
    if "latest" in wanted and known:  # one meaning of "latest" for report, export and bench: Store.latest_run_id
        newest = getattr(store_or_df, "latest_run_id", None)
        latest = newest() if callable(newest) else known[-1]
    # an id, 'latest', a run's name or a unique prefix of either (store/run_names.py: one rule for every command)
    return list(dict.fromkeys(r if r in known else resolve_run(store_or_df, r, latest=latest) for r in wanted))


def known_run_ids(store_or_df: Any) -> list[str]:
    """Run ids, oldest first."""
    if isinstance(store_or_df, pd.DataFrame):
        return [str(r) for r in dict.fromkeys(store_or_df["run_id"])] if "run_id" in store_or_df else []
    runs = store_or_df.runs()
    if runs is None or len(runs) == 0:
        return []
    for col in ("started_at", "created_at"):
        if col in runs:
            runs = runs.sort_values(col, kind="stable")
            break
    return [str(r) for r in runs["run_id"]]


def params_filled(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``params`` ``"{}"`` where a row has none (NULL, empty text: an import, an old store): such a
    row is a cell of its kernel with no size. A missing value never equals itself, so the report's findings
    found no rows for its size and failed ("single positional indexer is out-of-bounds")."""
    if "params" not in df or df.empty:
        return df
    col = df["params"]
    missing = col.isna() | col.map(lambda v: isinstance(v, str) and not v.strip()).astype(bool)
    if not missing.any():
        return df
    return df.assign(params=col.where(~missing, "{}"))


def gather(store_or_df: Any, run_ids: str | Iterable[str] | None = None,
           columns: Iterable[str] | None = None, thin: bool = False) -> ReportData:
    """What a report of ``run_ids`` shows; from a store, only the record columns ``columns`` (None: all), and
    with ``thin`` the samples of rows that have round medians only as their pooled median
    (:func:`workbench.report.thin_samples.thin_samples`: what the HTML and Markdown reports read of them)."""
    ids = resolve_run_ids(store_or_df, run_ids)
    if isinstance(store_or_df, ReportData):
        return store_or_df
    if isinstance(store_or_df, pd.DataFrame):
        df = store_or_df if ids is None else store_or_df[store_or_df["run_id"].isin(ids)]
        return ReportData(params_filled(df.reset_index(drop=True)), run_ids=ids or known_run_ids(df))
    store = store_or_df
    df = params_filled(store.results(run_ids=ids) if columns is None else _plain_text(store.results(
        run_ids=ids, columns=columns, share_empty=True, chunk_map=thin_samples if thin else None)))
    if ids is None:
        ids = [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df else []
    runs = store.runs()
    if runs is not None and len(runs) and "run_id" in runs:
        runs = runs[runs["run_id"].isin(ids)].reset_index(drop=True)
    envs = {}
    for env_id in (dict.fromkeys(df["env_id"].dropna()) if "env_id" in df else []):
        try:
            envs[str(env_id)] = store.environment(env_id)
        except (KeyError, ValueError, LookupError):
            envs[str(env_id)] = {"env_id": env_id, "note": "environment record missing from the store"}
    return ReportData(df, runs if runs is not None else pd.DataFrame(), envs, store_peaks(store), ids)


def _plain_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its text columns as object arrays of the same values (missing ones NaN, as read). Why: a
    report reads a column's values one by one in many places, and each value of pandas' ``str`` array came
    through a Python-level ``__getitem__`` (4 million calls, a tenth of a 100,000-row report's time)."""
    for c in [c for c in df.columns if str(df[c].dtype) == "str"]:  # a column at a time: one column's copy at once
        df[c] = df[c].astype(object)
    return df


def row_frames(store_or_df: Any, run_ids: str | Iterable[str] | None = None,
               rows_per_frame: int = 10_000) -> Iterator[pd.DataFrame]:
    """The rows :func:`gather` would give (``.df``), as consecutive frames with the same columns: from a
    store, read ``rows_per_frame`` at a time (a CSV of a million rows never holds them all); a frame or
    :class:`ReportData` is one frame."""
    if isinstance(store_or_df, (pd.DataFrame, ReportData)) or not hasattr(store_or_df, "result_frames"):
        yield gather(store_or_df, run_ids).df
        return
    yield from store_or_df.result_frames(resolve_run_ids(store_or_df, run_ids), rows_per_frame)


def row_tuples(store_or_df: Any, run_ids: str | Iterable[str] | None, quote_prefixes: Iterable[str],
               csv_fields: bool = False, joined: bool = False) -> tuple[list[str], Iterator[Any]] | None:
    """A store's rows as (columns, batches of tuples) converted by SQLite (``Store.result_tuples``: text
    starting with one of ``quote_prefixes`` quoted; ``csv_fields``: each value as the csv module writes it;
    ``joined``: each batch as its CSV lines, one text),
    for writers that need no frame (a CSV); None for rows that are no store's, or when the store cannot (then
    :func:`row_frames`)."""
    if isinstance(store_or_df, (pd.DataFrame, ReportData)) or not hasattr(store_or_df, "result_tuples"):
        return None
    return store_or_df.result_tuples(resolve_run_ids(store_or_df, run_ids), quote_prefixes, csv_fields=csv_fields,
                                     joined=joined)


def store_peaks(store: Any) -> pd.DataFrame:
    """The store's measured-peaks table (empty when it has none)."""
    peaks = getattr(store, "peaks", None)
    if peaks is None:
        return pd.DataFrame()
    try:
        p = peaks() if callable(peaks) else peaks
    except Exception:  # noqa: BLE001 — a report without ceilings is still a report
        return pd.DataFrame()
    return p if isinstance(p, pd.DataFrame) else pd.DataFrame(p)



def check_baseline(df: pd.DataFrame, baseline: Any, flag: str = "baseline", given: Any = None) -> None:
    """A baseline (``VARIANT``, ``VARIANT @ BACKEND`` or ``@BACKEND``) that names no measured series is a
    ValueError listing the valid series (an unknown one would silently give "no baseline")."""
    variant, backend = parse_baseline(baseline)
    written = baseline if given is None else given
    if variant is None and backend is None:
        if isinstance(written, str) and written.strip():  # "@" or " @ " named nothing, and compared nothing
            raise ValueError(f"{flag} {written!r} names neither a variant nor a backend; give VARIANT, "
                             "VARIANT@BACKEND or @BACKEND")
        return
    baseline = written  # as the user wrote it, in messages
    rows = df[df["status"] == Status.OK] if "status" in df and (df["status"] == Status.OK).any() else df
    if rows.empty or "variant" not in rows or "backend" not in rows:
        raise ValueError(f"{flag} {baseline!r}: there are no measured cells to compare against")
    match = pd.Series(True, index=rows.index)
    if variant is not None:
        match &= rows["variant"].astype(str) == variant
    if backend is not None:
        match &= rows["backend"].astype(str) == backend
    if not match.any():
        series = list(dict.fromkeys(series_key(v, b) for v, b in zip(rows["variant"], rows["backend"], strict=True)))
        shown = ", ".join(series[:40]) + (f", ... ({len(series)} in all)" if len(series) > 40 else "")
        raise ValueError(f"{flag} {baseline!r} names no measured series; valid: {shown} (give VARIANT, "
                         "VARIANT@BACKEND or @BACKEND)")

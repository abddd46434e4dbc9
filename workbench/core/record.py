"""The measurement record: the row, its statuses and the cell key — the bottom layer of the package.

The harness writes rows, the store keeps them, reports, plots and the UI read
them; all of them import this module and it imports nothing from the package,
so reading stored results never loads the harness. ``docs/measurement-record.md``
documents exactly :data:`RESULT_COLUMNS` (a test keeps the two equal).

Rows carry what their analysis needs (``library``, ``bound``), so a run
imported from another machine is judged by its own rows, not by this
machine's catalog.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.status import Status

#: The names of the ways a cell's run can end, from :class:`workbench.core.status.Status` (every member but
#: ``implausible``, which issue 22 adds to the stored statuses).
STATUSES: tuple[str, ...] = tuple(s.value for s in Status if s is not Status.IMPLAUSIBLE)
#: A value a stored row holds in one column (JSON columns hold their JSON as text).
RowValue = str | int | float | bool | None
#: A row as a plain dict, column -> value: the form a row takes where it is written and read back.
RowDict = dict[str, RowValue]
#: A JSON value: what exports, environment records, stored specs and device descriptions hold.
Json = str | int | float | bool | None | list["Json"] | dict[str, "Json"]
#: A JSON object.
JsonObject = dict[str, Json]
#: What ``bound`` may say.
BOUNDS = ("memory-bound", "compute-bound")
#: Columns stored as JSON text.
JSON_COLUMNS = ("params", "samples_s", "host_samples_s", "round_medians_s", "round_probes_s", "round_bandwidth_gbs",
                "round_host_slowdowns", "round_host_probes_s", "round_gpu")
#: What a row's time is (``timing_mode``): ``host`` (a CPU's wall clock), ``launch`` (device events or a
#: synchronised clock around each call: launch gaps included), ``kernel`` (the kernels a call launched, first
#: start to last end, from CUPTI activity records) and ``graph`` (replays of a captured device graph of the
#: sample's calls). Rows of two modes are never judged against each other.
TIMING_MODES = ("host", "launch", "kernel", "graph")


@dataclass
class Row:
    """One cell's result. Every field may be None: a row that failed early has only its identity."""

    run_id: str | None = None
    cell_key: str | None = None
    kernel: str | None = None
    variant: str | None = None
    backend: str | None = None
    runtime: str | None = None
    device: str | None = None
    dtype: str | None = None
    params: str | None = None
    size: int | None = None
    size_label: str | None = None
    mode: str | None = None
    cache: str | None = None
    library: bool | None = None
    bound: str | None = None
    status: str | None = None
    message: str | None = None
    traceback: str | None = None
    timer_kind: str | None = None
    timer_overhead_s: float | None = None
    timing_mode: str | None = None
    samples_s: str | None = None
    host_samples_s: str | None = None
    n_samples: int | None = None
    median_s: float | None = None
    mean_s: float | None = None
    min_s: float | None = None
    q1_s: float | None = None
    q3_s: float | None = None
    iqr_s: float | None = None
    rel_spread: float | None = None
    host_median_s: float | None = None
    flops: float | None = None
    bytes: float | None = None
    gflops: float | None = None
    gbps: float | None = None
    intensity: float | None = None
    pct_peak_bw: float | None = None
    pct_peak_flops: float | None = None
    pct_published: float | None = None
    peak_mem_bytes: int | None = None
    mem_method: str | None = None
    max_error: float | None = None
    tolerance: float | None = None
    env_id: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    wall_s: float | None = None
    setup_s: float | None = None
    first_call_s: float | None = None
    warmup_calls: int | None = None
    calls_per_sample: int | None = None
    n_inputs: int | None = None
    stopped_by: str | None = None
    median_precision: float | None = None
    host_settle_s: float | None = None
    host_slowdown: float | None = None
    host_retries: int | None = None
    host_probe_s: float | None = None
    seed: int | None = None
    # -- noise: rounds, the flag, and the conditions the cell ran under ---------------------------------
    rounds: int | None = None
    round_medians_s: str | None = None
    round_sizes: str | None = None
    speed_probe_s: float | None = None
    round_probes_s: str | None = None
    bandwidth_probe_gbs: float | None = None
    round_bandwidth_gbs: str | None = None
    round_host_slowdowns: str | None = None
    round_host_probes_s: str | None = None
    noise: float | None = None
    noisy: bool | None = None
    noise_note: str | None = None
    load_avg_1m: float | None = None
    other_cpu_share: float | None = None
    other_cpu_s: float | None = None
    steal_s: float | None = None
    cpu_freq_mhz: float | None = None
    gpu_clock_mhz: float | None = None
    gpu_temp_c: float | None = None
    gpu_throttle: str | None = None
    gpu_mem_clock_mhz: float | None = None
    gpu_power_w: float | None = None
    # -- GPU visits: clocks brought up before timing, samples dropped below them, per-round readings ------
    clock_warmup_s: float | None = None
    samples_discarded: int | None = None
    round_gpu: str | None = None
    flush_bytes: int | None = None
    # -- energy per call from the device's energy counter (NVML) ---------------------------------------------
    energy_j_per_call: float | None = None
    gflop_per_j: float | None = None
    energy_method: str | None = None
    threads: str | None = None
    # -- ceilings behind the % of peak ------------------------------------------------------------------
    ceiling_gbps: float | None = None
    ceiling_gflops: float | None = None
    ceiling_source: str | None = None
    peak_note: str | None = None
    # -- execution cache of multi-kernel blocks (graph / fused modes) -----------------------------------
    exec_cache: str | None = None
    # -- the configuration an autotuned variant chose (Triton's autotune; `workbench tune` later) ----------
    tuned_config: str | None = None
    # -- which LLM model shapes a cell's size came from (llm suite) ---------------------------------------
    llm_shape: str | None = None

    @classmethod
    def from_mapping(cls, row: Mapping[str, Any]) -> Row:
        """The typed view of a row dict (keys that are not columns are ignored)."""
        return cls(**{k: row[k] for k in RESULT_COLUMNS if k in row})

    def to_dict(self) -> RowDict:
        return dataclasses.asdict(self)


_SQL_TYPES = {"str": "TEXT", "float": "REAL", "int": "INTEGER", "bool": "INTEGER"}

#: Column name -> SQLite type, in the order of :class:`Row`.
RESULT_COLUMNS: dict[str, str] = {f.name: _SQL_TYPES[str(f.type).split(" ")[0]] for f in dataclasses.fields(Row)}


def canonical_params(params: Mapping[str, int]) -> str:
    return json.dumps({k: int(v) for k, v in params.items()}, separators=(",", ":"))


def cell_key(kernel: str, variant: str, backend: str, dtype: str, params: Mapping[str, int], mode: str,
             cache: str) -> str:
    """Stable across processes and machines: the resume and de-duplication key."""
    text = json.dumps([kernel, variant, backend, dtype, sorted((k, int(v)) for k, v in params.items()),
                       mode, cache], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def size_of(params: Mapping[str, int]) -> int:
    return math.prod(int(v) for v in params.values()) if params else 0


def size_label(params: Mapping[str, int]) -> str:
    return " ".join(f"{k}={int(v)}" for k, v in params.items())


def empty_row() -> RowDict:
    return Row().to_dict()


def number_or_none(v: Any) -> float | None:
    """``v`` as a finite float, else None: a stored or imported row may hold None, NaN, inf or text."""
    if v is None:  # the common case first: an exception per empty value cost a report of 1M rows seconds
        return None
    if type(v) is float:
        return v if math.isfinite(v) else None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def finite_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None

"""What comes back from running one cell: the typed :class:`CellResult` every executor returns.

The harness fills a result as the cell goes (identity, outcome, timing statistics, rates, conditions,
memory, notes); the row dict of :mod:`workbench.core.record` exists only where the store writes and reads it:
:meth:`CellResult.to_row` and :meth:`CellResult.from_row` are that boundary, and the stored schema
(``docs/measurement-record.md``) is the same as before. Round fields (``rounds``, ``noise`` ...) belong to
the merged row of a cell (:func:`workbench.measure.rounds.merge_rounds`), not to one run of it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.core.conditions import Conditions
from workbench.core.record import (
    RESULT_COLUMNS,
    JsonObject,
    RowDict,
    canonical_params,
    empty_row,
    finite_or_none,
    size_label,
    size_of,
)
from workbench.core.status import Status
from workbench.judge.stats import Stats, summarize
from workbench.measure.request import Cell
from workbench.measure.timer import Timing


@dataclass
class TimingStats:
    """How the cell was timed and the statistics of its samples (fields stay None until reached). Each field is
    the row column of that name, typed as :class:`workbench.core.record.Row` types it, except that the samples are a
    list here and JSON text in the row (tests/unit/test_spine.py keeps the two in step)."""

    timer_kind: str | None = None
    timer_overhead_s: float | None = None
    timing_mode: str | None = None
    first_call_s: float | None = None
    n_inputs: int | None = None
    samples_s: list[float] | None = None
    host_samples_s: list[float] | None = None
    n_samples: int | None = None
    median_s: float | None = None
    mean_s: float | None = None
    min_s: float | None = None
    q1_s: float | None = None
    q3_s: float | None = None
    iqr_s: float | None = None
    rel_spread: float | None = None
    host_median_s: float | None = None
    calls_per_sample: int | None = None
    warmup_calls: int | None = None
    stopped_by: str | None = None
    median_precision: float | None = None
    #: A CPU timing's wait for the host to run at speed, and how slow it ran around the timing (probe over best).
    host_settle_s: float | None = None
    host_slowdown: float | None = None
    host_retries: int | None = None
    host_probe_s: float | None = None

    def take(self, timing: Timing) -> Stats:
        """The samples of a timing loop and their statistics (returned too: their raw spread)."""
        st, host = summarize(timing.samples_s), summarize(timing.host_samples_s)
        self.samples_s, self.host_samples_s = list(timing.samples_s), list(timing.host_samples_s)
        self.n_samples, self.median_s, self.mean_s, self.min_s = st.n, st.median, st.mean, st.min
        self.q1_s, self.q3_s, self.iqr_s = st.q1, st.q3, st.iqr
        self.rel_spread, self.host_median_s = finite_or_none(st.rel_spread), host.median
        self.calls_per_sample, self.warmup_calls, self.stopped_by = (timing.calls_per_sample, timing.warmup_calls,
                                                                     timing.stopped_by)
        self.median_precision = finite_or_none(timing.precision)
        return st


@dataclass
class Rates:
    """The work of a cell and, once timed, its rates and how far they are from the ceilings (row columns)."""

    flops: float | None = None
    bytes: float | None = None
    intensity: float | None = None
    gflops: float | None = None
    gbps: float | None = None
    pct_peak_bw: float | None = None
    pct_peak_flops: float | None = None
    pct_published: float | None = None
    ceiling_gbps: float | None = None
    ceiling_gflops: float | None = None
    ceiling_source: str | None = None
    peak_note: str | None = None


@dataclass
class GpuFacts:
    """A GPU visit's clocks, dropped samples, cache flush and energy (row columns; empty on a CPU):
    :mod:`workbench.measure.gpu_visit` fills them."""

    clock_warmup_s: float | None = None
    samples_discarded: int | None = None
    round_gpu: str | None = None
    flush_bytes: int | None = None
    energy_j_per_call: float | None = None
    gflop_per_j: float | None = None
    energy_method: str | None = None


@dataclass
class Memory:
    """Peak memory of one untimed call, and how it was measured (row columns)."""

    peak_mem_bytes: int | None = None
    mem_method: str | None = None


#: Columns written from a result's own fields (the rest come from its parts and its cell).
_OWN = ("runtime", "device", "library", "bound", "status", "message", "traceback", "max_error", "tolerance",
        "started_at", "finished_at", "wall_s", "setup_s", "seed", "exec_cache", "tuned_config")
_PARTS = {"timing": TimingStats, "rates": Rates, "conditions": Conditions, "memory": Memory, "gpu": GpuFacts}
#: Columns of the cell's identity, rebuilt from the cell.
_IDENTITY = ("cell_key", "kernel", "variant", "backend", "dtype", "params", "size", "size_label", "mode", "cache")


@dataclass
class CellResult:
    """One run of one cell: what it is, how it ended, and what was measured."""

    cell: Cell
    status: Status | None = None
    message: str | None = None
    traceback: str | None = None
    #: Where an error struck, or the worst check's seed.
    seed: int | None = None
    runtime: str | None = None
    device: str | None = None
    #: From the catalog: a library baseline? memory- or compute-bound? (rows are judged by themselves)
    library: bool | None = None
    bound: str | None = None
    max_error: float | None = None
    tolerance: float | None = None
    started_at: str | None = None
    finished_at: str | None = None
    wall_s: float | None = None
    setup_s: float | None = None
    timing: TimingStats = field(default_factory=TimingStats)
    rates: Rates = field(default_factory=Rates)
    conditions: Conditions = field(default_factory=Conditions)
    memory: Memory = field(default_factory=Memory)
    gpu: GpuFacts = field(default_factory=GpuFacts)
    #: Execution-cache statistics of a block variant (JSON text), and an autotuned variant's choice.
    exec_cache: str | None = None
    tuned_config: str | None = None
    #: The baseline's cell key and the log ratios (its block median / this cell's) of the block pairs timed
    #: alternately with it in this visit (:attr:`CellRequest.partner`).
    pair_with: str | None = None
    pair_log_ratios: list[float] | None = None
    #: Said about the run after its message (in order); the row's message is the message and the notes.
    notes: list[str] = field(default_factory=list)
    #: Where the cell ran, when not here: ``env_id``, and on Dask ``machine``, ``worker``,
    #: ``cluster_workers_on_host`` (stored with the row; names outside the schema go to its ``extra``).
    placement: RowDict = field(default_factory=dict)
    #: The environment record of the machine it ran on, when that is not this one and the store may not
    #: have it yet (kept by the store's environments, not in the row).
    environment: JsonObject | None = field(default=None, repr=False)

    def end(self, status: Status, message: str | None = None, **fields: Any) -> None:
        """Set the outcome (and any other field, e.g. ``traceback``)."""
        self.status, self.message = status, message
        for k, v in fields.items():
            setattr(self, k, v)

    def note(self, text: str) -> None:
        if text:
            self.notes.append(text)

    @property
    def full_message(self) -> str | None:
        return "; ".join(filter(None, [self.message, *self.notes])) or None

    # -- the store boundary -----------------------------------------------------------------------------------
    def to_row(self) -> RowDict:
        """The row the store keeps (:data:`workbench.core.record.RESULT_COLUMNS`, placement beyond them)."""
        row = empty_row()
        p = self.cell.params_dict
        row.update(cell_key=self.cell.key, kernel=self.cell.kernel, variant=self.cell.variant,
                   backend=self.cell.backend, dtype=self.cell.dtype, params=canonical_params(p), size=size_of(p),
                   size_label=size_label(p), mode=self.cell.mode, cache=self.cell.cache)
        row.update({k: getattr(self, k) for k in _OWN})
        for name in _PARTS:
            row.update(dataclasses.asdict(getattr(self, name)))
        row["status"] = self.status.value if self.status is not None else None
        row["message"] = self.full_message
        for k in ("samples_s", "host_samples_s"):
            row[k] = json.dumps(row[k]) if row[k] is not None else None
        row.update(self.placement)
        if self.pair_with is not None and self.pair_log_ratios:
            row[PAIR_VISIT] = json.dumps({"with": self.pair_with, "d": float(np.median(self.pair_log_ratios)),
                                          "blocks": len(self.pair_log_ratios)})
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CellResult:
        """The result a stored row describes (its notes are part of its message; round fields are left)."""
        cell = Cell.make(row["kernel"], row["variant"], row["backend"], row["dtype"],
                         json.loads(row["params"]) if isinstance(row["params"], str) else dict(row["params"] or {}),
                         row.get("mode") or "eager", row.get("cache") or "hot")
        parts = {name: kind(**{f.name: row.get(f.name) for f in dataclasses.fields(kind)})
                 for name, kind in _PARTS.items()}
        for k in ("samples_s", "host_samples_s"):
            text = row.get(k)
            setattr(parts["timing"], k, json.loads(text) if isinstance(text, str) else text)
        own = {k: row.get(k) for k in _OWN}
        own["status"] = Status(row["status"]) if row.get("status") else None
        placement = {k: v for k, v in row.items()
                     if (k not in RESULT_COLUMNS or k == "env_id") and k != "extra" and v is not None}
        return cls(cell=cell, **own, **parts, placement=placement)


#: The row key of one visit's paired evidence (:attr:`CellResult.pair_log_ratios` summed up), which
#: :func:`workbench.measure.rounds.merge_pair` turns into the cell's per-round effects.
PAIR_VISIT = "pair_visit"

#: Result columns a row's identity and a result's fields do not cover: set by the sweep (run, LLM shape) or
#: by merging rounds.
SWEEP_COLUMNS = ("run_id", "env_id", "llm_shape", "rounds", "round_medians_s", "noise", "noisy", "noise_note",
                 "speed_probe_s", "round_probes_s", "bandwidth_probe_gbs", "round_bandwidth_gbs",
                 "round_sizes", "round_host_slowdowns", "round_host_probes_s")

"""The one-call notebook entry point: ``workbench.benchmark(kernel="softmax")`` -> :class:`Results`.

``benchmark`` describes a sweep (:class:`workbench.sweep.driver.SweepSpec`), runs it
with :func:`workbench.sweep.driver.run_sweep` (which stores every row as it
finishes) and wraps what came out in :class:`Results`: the tidy rows plus the
tables, plots and exports that read them.

The report's data, plot and export modules load matplotlib (about a second): they load when a plot, a
baseline check or an export is asked for, not when the results are made.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.catalog import kernels
from workbench.judge.compare import speedup_vs_baseline
from workbench.report.data import check_baseline, resolve_run_ids, store_peaks
from workbench.report.summary import NOT_OK_CELLS, failures_table, summary_table
from workbench.roofs.model import resolve_roofs
from workbench.store.database import open_store
from workbench.sweep.driver import SweepSpec, run_sweep


class Results:
    """Tidy measurement rows of one or more runs, with tables, plots and exports.

    ``df`` follows ``docs/measurement-record.md``. Built by :func:`benchmark`, or
    from rows already stored with :meth:`from_store`.
    """

    def __init__(self, df: pd.DataFrame, run_ids: Sequence[str] | None = None, store: Any = None,
                 interrupted: bool = False, wall_s: float | None = None) -> None:
        self.df = df.reset_index(drop=True)
        ids = list(run_ids) if run_ids is not None else (
            [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df else [])
        self.run_ids: list[str] = ids
        self.store = store
        self.interrupted = interrupted
        self.wall_s = wall_s

    @classmethod
    def from_store(cls, store: Any, run_ids: str | Iterable[str] | None = None) -> Results:
        """Rows of ``run_ids`` (a list, one id, ``"latest"``, or None for every run) from a store or its path."""
        store = open_store(store, must_exist=True)
        ids = resolve_run_ids(store, run_ids)
        df = store.results(run_ids=ids)
        return cls(df, ids, store)

    @property
    def run_id(self) -> str | None:
        """The run's id (the last one when these results span several runs)."""
        return self.run_ids[-1] if self.run_ids else None

    # -- tables -------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """One formatted line per cell: status, median ± IQR, GB/s, GFLOP/s, % of peak, memory, error."""
        # the store's measured peaks name each ceiling's level (L2 / LLC / DRAM); the rows alone do not
        return summary_table(self.df, roofs=resolve_roofs(self.df, self._peaks()))

    def speedup(self, baseline: Any = None) -> pd.DataFrame:
        """Speed-up of every ok cell against ``baseline`` ("variant", "variant @ backend", or a dict;
        default: the kernel's library variant), with its interval from the rounds, noise floor and verdict."""
        from workbench.report.styles import parse_baseline

        check_baseline(self.df, baseline)  # an unknown one is an error listing the measured series
        variant, backend = parse_baseline(baseline)
        return speedup_vs_baseline(self.df, baseline_variant=variant, baseline_backend=backend)

    def failures(self) -> pd.DataFrame:
        """Cells that did not pass, with their status and reason (unsupported ones included)."""
        return failures_table(self.df, NOT_OK_CELLS)

    # -- plots --------------------------------------------------------------
    def plot(self, metric: str = "median_s", kind: str = "line", baseline: Any = None, **kw: Any) -> Any:
        """A matplotlib Figure: ``kind`` "line" (``metric`` vs size), "speedup", "roofline" or "memory"."""
        from workbench.report import plots

        if kind == "line":
            return plots.plot_metric(self.df, metric, baseline=baseline, **kw)
        if baseline is not None:
            check_baseline(self.df, baseline)
        if kind == "speedup":
            return plots.plot_speedup(self.df, baseline=baseline, **kw)
        if kind == "roofline":
            return plots.plot_roofline(self.df, self._peaks(), **kw)
        if kind == "memory":
            return plots.plot_memory(self.df, **kw)
        raise ValueError(f"unknown plot kind {kind!r}; valid kinds: line, speedup, roofline, memory")

    def _peaks(self) -> pd.DataFrame | None:
        return store_peaks(self.store) if self.store is not None else None

    # -- exports ------------------------------------------------------------
    def _source(self) -> Any:
        return self.store if self.store is not None else self.df

    def write(self, path: str | os.PathLike, format: str | None = None, **kw: Any) -> Path:  # noqa: A002
        from workbench.report.exporters import write_report

        return write_report(self._source(), self.run_ids or None, path, format=format, **kw)

    def to_html(self, path: str | os.PathLike, **kw: Any) -> Path:
        """One self-contained HTML file (figures embedded, nothing fetched from anywhere)."""
        return self.write(path, "html", **kw)

    def to_markdown(self, path: str | os.PathLike, **kw: Any) -> Path:
        return self.write(path, "md", **kw)

    def to_csv(self, path: str | os.PathLike) -> Path:
        return self.write(path, "csv")

    def to_json(self, path: str | os.PathLike) -> Path:
        """The store's export format: another machine can ``workbench import`` it."""
        return self.write(path, "json")

    # -- display ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.df)

    def __repr__(self) -> str:
        counts = self.df["status"].value_counts().to_dict() if "status" in self.df else {}
        status = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no cells"
        extra = " (interrupted)" if self.interrupted else ""
        return f"<Results {', '.join(self.run_ids) or '(no run)'}: {len(self.df)} cells, {status}{extra}>"

    def _repr_html_(self) -> str:
        import html

        table = self.summary().to_html(index=False, border=0, na_rep="")  # DataFrame.to_html escapes cells
        return f"<p>{html.escape(repr(self))}</p>{table}"


def _as_list(x: Any) -> list[Any] | None:
    if x is None:
        return None
    return [x] if isinstance(x, str) else list(x)


def benchmark(kernel: str | None = None, variants: str | Iterable[str] | None = None,
            backends: str | Iterable[str] | None = None, sizes: Any = None, dtype: str = "float32",
            mode: str | Iterable[str] | None = None, cache: str = "hot", budget_s: float | None = None,
            rounds: int | None = None, store: Any = None, progress: bool = True, name: str | None = None,
            **spec_kw: Any) -> Results:
    """Benchmark the variants of one kernel across backends and sizes; returns :class:`Results`.

    ``variants`` and ``backends`` default to everything that applies, ``mode``
    to the sweep's default (eager, fused and graph; ask for ``mode="compiled"`` or a
    list to include ``torch.compile``-style variants, whose first call compiles);
    named ``variants`` run whatever their mode. ``sizes`` to the kernel's "quick" list
    (or a size-list name, ints for one-axis kernels, tuples in axis order, or
    parameter dicts). ``budget_s`` is the timing budget per cell (all rounds together); ``rounds``
    measures every cell once per round, in an order shuffled per round (default
    :data:`workbench.sweep.driver.DEFAULT_ROUNDS`), and keeps each round's median; other
    :class:`~workbench.sweep.driver.SweepSpec` fields (``timeout_s``, ``min_samples``,
    ``seed`` ...) pass through ``spec_kw``, among them ``isolation`` and ``memory_cap``: by default cells
    run in worker processes, so a kernel that crashes ends as a ``crashed`` row and never kills the
    notebook's kernel; ``isolation="in-process"`` runs them here, for debugging.
    Every row is stored as it finishes (``store``: a Store, a path, or the
    default store), so an interrupted call loses nothing.
    """
    if not kernel:
        raise ValueError(f"benchmark() needs kernel=...; valid kernels: {', '.join(sorted(kernels()))}")
    if isinstance(sizes, (int, dict)) and not isinstance(sizes, bool):
        sizes = [sizes]
    unknown = sorted(set(spec_kw) - {f.name for f in dataclasses.fields(SweepSpec)})
    if unknown:
        raise ValueError(f"benchmark() got unknown option(s) {', '.join(unknown)}; valid: "
                         f"{', '.join(f.name for f in dataclasses.fields(SweepSpec))}")
    fields: dict[str, Any] = {"kernels": [kernel], "variants": _as_list(variants), "backends": _as_list(backends),
                              "dtypes": [dtype], "sizes": sizes, "modes": _as_list(mode),
                              "cache": cache, "budget_s": budget_s, "rounds": rounds, **spec_kw}
    spec = SweepSpec(**{k: v for k, v in fields.items() if v is not None})
    spec.check()  # types and ranges (budget_s="fast", nan, sizes=[1.5]) fail here, before a store is opened
    spec.cells()  # so do unknown names and sizes that fit no kernel
    outcome = run_sweep(spec, store=open_store(store), name=name or f"benchmark {kernel}", progress=progress)
    return Results(outcome.results(), [outcome.run_id], outcome.store, interrupted=outcome.interrupted,
                   wall_s=outcome.wall_s)

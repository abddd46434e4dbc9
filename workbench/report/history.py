"""The report's History section: when the store holds several runs of the report's cells on one machine,
each series on its timeline, the series with changes first (:mod:`workbench.history.timeline`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.history.series import SeriesFilter
from workbench.history.timeline import History, SeriesHistory, build_history

#: A series needs this many runs before a report shows its history ("more than a few").
MIN_HISTORY_RUNS = 4
#: Figures in the section at most (the series with changes first); the others are listed in a table.
MAX_HISTORY_FIGURES = 24


@dataclass
class HistoryFigure:
    """One series: its label, machine, changes in words and its figure (inline SVG with hover titles)."""

    label: str
    machine: str
    runs: int
    noise: str
    changes: list[str]
    regression: bool
    svg: str = ""


@dataclass
class HistorySection:
    """What the History section shows."""

    figures: list[HistoryFigure]
    n_series: int
    n_changed: int
    threshold: float
    #: Series with enough runs that got no figure (past :data:`MAX_HISTORY_FIGURES`): label, runs, level.
    others: list[HistoryFigure] = field(default_factory=list)

    @property
    def summary(self) -> str:
        return (f"{self.n_series} series with {MIN_HISTORY_RUNS} or more runs on one machine; {self.n_changed} "
                f"changed by {self.threshold:.0%} or more (a step beyond each series' own run-to-run noise).")


def history_section(store: Any, kernels: Iterable[str], to_svg: Callable[[Any, str], str] | None = None,
                    figures: bool = True) -> HistorySection | None:
    """The section for the report's ``kernels``, or None when no series has :data:`MIN_HISTORY_RUNS` runs,
    or ``store`` is no store (a report of a table)."""
    conn = getattr(store, "connection", None)
    if conn is None:
        return None
    history = build_history(conn, SeriesFilter(kernels=tuple(sorted(set(kernels)))), min_runs=MIN_HISTORY_RUNS)
    if not history.series:
        return None
    return _section(history, to_svg if figures else None)


def _section(history: History, to_svg: Callable[[Any, str], str] | None) -> HistorySection:
    items = [_item(h) for h in history.series]
    if to_svg is not None:
        from workbench.report.plots.history import hover_marks, plot_series_history

        for i, (h, item) in enumerate(zip(history.series[:MAX_HISTORY_FIGURES], items, strict=False)):
            fig = plot_series_history(h)
            svg = to_svg(fig, f"history-{i}")
            item.svg = svg.replace("</svg>", hover_marks(fig, h) + "</svg>", 1)
    shown = items[:MAX_HISTORY_FIGURES] if to_svg is not None else items
    return HistorySection(shown, len(items), sum(1 for h in history.series if h.changes), history.threshold,
                          items[len(shown):])


def _item(h: SeriesHistory) -> HistoryFigure:
    from workbench.core.units import fmt_time_auto

    changes = [f"{'slower' if c.regression else 'faster'} {c.text}" for c in h.changes]
    return HistoryFigure(h.series.label, f"{h.series.machine.label} [{h.series.machine.id}]", len(h.series.points),
                         f"±{h.sigma:.1%}, now {fmt_time_auto(h.level_s)}", changes, h.latest_regression is not None)

"""A figure's frame: the panels, the one legend beside them, and the rows left out listed under them.

Every figure family draws its panels and hands the figure to :func:`finish`, so margins, the legend and the
"not plotted" footnote read the same in every figure, and a missing line is never a silent one.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.core.status import Status
from workbench.report.styles import series_name

#: Rows listed by name under the axes as not plotted; the rest are counted.
MAX_LISTED = 8
LEGEND_FONT = 7.5
#: Legend entry of the hollow rings over noisy points (one per figure, whatever its panels count).
NOISY_LABEL = "hollow: noisy cell"
#: Legend entry of the crosses drawn for disturbed cells (quartiles spanning ±50% of the median or more: the tables
#: print "disturbed" and no rate for them), counted apart from the noisy ones.
DISTURBED_LABEL = "x: disturbed cell"
#: The legend entry of a cell whose rounds fell in two modes (:func:`~workbench.report.plots.series.mark_modes`).
MODES_LABEL = "bar: two-mode cell"
#: Legend entries that carry a count of points: one entry per figure, the largest panel's count.
COUNTED_LABELS = (NOISY_LABEL, DISTURBED_LABEL, MODES_LABEL)


def new_figure(n_axes: int = 1, width: float = 5.6, height: float = 3.4) -> tuple[Figure, list[Axes]]:
    """A figure of ``n_axes`` panels, two a row, each ``width`` x ``height`` inches; no pyplot, so nothing is
    shown and no global figure list grows."""
    cols = 1 if n_axes == 1 else 2
    rows = (n_axes + cols - 1) // cols
    fig = Figure(figsize=(width * cols, height * rows))  # fixed margins (see finish): layout engines cost 2-3x
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(n_axes)]
    return fig, axes


def split_ok(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows that can be plotted, rows that cannot and must be listed)."""
    if "status" not in df:
        return df, df.iloc[0:0]
    ok = df["status"] == Status.OK
    return df[ok], df[~ok]


#: Legend handles long enough for a dashed line (a second run, a second dtype) to read dashed beside its marker:
#: at matplotlib's 2.0, 07's run A and run B entries looked the same.
HANDLE_LENGTH = 3.5


def _legend_width(labels: list[str]) -> float:
    """Inches a legend of these labels takes beside the axes (7.5 pt text: ~0.058 in per character); a label of
    several lines is as wide as its longest."""
    return 0.0 if not labels else min(4.4, 0.6 + 0.052 * max(len(ln) for s in labels for ln in s.split("\n")))


def _figure_legend(fig: Figure, axes: list[Axes]) -> float:
    """One legend for the whole figure, right of the axes (never over the data); returns its width."""
    handles, labels = [], []
    for a in axes:
        for h, lab in zip(*a.get_legend_handles_labels(), strict=True):
            counted = next((c for c in COUNTED_LABELS if lab.startswith(c)), None)
            if counted and any(x.startswith(counted) for x in labels):
                i = next(i for i, x in enumerate(labels) if x.startswith(counted))  # one entry, the panels'
                labels[i] = max(labels[i], lab, key=lambda t: int("".join(filter(str.isdigit, t)) or 0))  # largest
                continue
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    if not labels:
        return 0.0
    fig.legend(handles, labels, loc="upper right", fontsize=LEGEND_FONT, frameon=False, borderaxespad=0.4,
               handlelength=HANDLE_LENGTH)
    return _legend_width(labels)


def finish(fig: Figure, bad: pd.DataFrame, layout: bool = True, notes: list[str] | None = None,
           legend: bool = True) -> Figure:
    """List the rows left out of the figure (status and reason) under the axes, put the legend beside the
    axes, and set the margins.

    ``notes`` (e.g. why points sit above a roofline) go under the axes first, in dark orange.
    ``layout`` False leaves the size, margins and legend of a figure the caller made (``ax=`` given) alone.
    Both are wrapped at word boundaries to the figure's width, so none is cut at its edge or mid-word.
    """
    entries = [f"{r.get('kernel')}: {series_name(r.get('variant'), r.get('backend'), r.get('runtime'))} "
               f"{r.get('size_label') or ''} — {r.get('status')}: {_first_clause(r.get('message'))}"
               for _, r in bad.head(MAX_LISTED).iterrows()]
    if len(bad) > MAX_LISTED:
        entries.append(f"... and {len(bad) - MAX_LISTED} more")
    w, h = fig.get_size_inches()
    legend_w = _figure_legend(fig, list(fig.axes)) if layout and legend else 0.0
    chars = _chars_across(w + legend_w)
    lines = [ln for e in entries for ln in _wrap(e, chars - len("not plotted: "))]
    notes = [ln for n in (notes or []) for ln in _wrap(n, chars)]
    line_h = 0.14
    bad_h = line_h * (len(lines) + 1) if lines else 0.0
    notes_h = line_h * (len(notes) + 0.5) if notes else 0.0
    note_h = bad_h + notes_h
    if not layout:
        if lines:
            fig.text(0.01, 0.01, "not plotted: " + "\n".join(lines), fontsize=7, color="#a33", va="bottom")
        if notes:
            fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", va="bottom")
        for a in fig.axes:
            if a.get_legend_handles_labels()[0]:
                a.legend(fontsize=LEGEND_FONT, handlelength=HANDLE_LENGTH)
        return fig
    axes = list(fig.axes)
    fig.set_size_inches(w + legend_w, h + note_h)
    w, h = w + legend_w, h + note_h
    if lines:
        fig.supxlabel("not plotted: " + "\n".join(lines), fontsize=7, color="#a33", ha="left", x=0.01, y=0.01,
                      va="bottom")
    if notes:
        fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", ha="left", va="bottom")
    has_ticks2 = any("\n" in t.get_text() for a in axes for t in [*a.get_xticklabels(), a.xaxis.label])
    top = 0.62 if fig._suptitle is not None else 0.35  # noqa: SLF001 — matplotlib keeps no public accessor
    # margins in inches, so panels keep their size whatever the notes and legend add
    fig.subplots_adjust(left=0.8 / w, right=1 - (0.15 + legend_w) / w, top=1 - top / h,
                        bottom=(0.55 + (0.15 if has_ticks2 else 0) + note_h) / h, wspace=0.3 if len(axes) > 1
                        else 0.2, hspace=0.5)
    return fig


def _wrap(text: str, width: int = 120) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="    ", break_long_words=True) or [text]


def _chars_across(width_in: float, font_pt: float = 7.0) -> int:
    """Characters of ``font_pt`` text that fit across ``width_in`` inches, with a margin (DejaVu Sans averages
    ~0.6 em a character; wider glyphs and the left offset take the rest)."""
    return max(40, int((width_in - 0.3) * 72 / (font_pt * 0.62)))


def _first_clause(message: object, limit: int = 110) -> str:
    """A failure message short enough for a footnote, cut at a clause or word boundary (never mid-word)."""
    text = " ".join(str(message or "").split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in (": ", "; ", ", "):
        cut = head.rfind(sep)
        if cut > limit // 2:
            return head[:cut] + " …"
    return head.rsplit(" ", 1)[0] + " …"

"""Telling a figure's lines apart: which columns make a series, its legend text, colour, marker and line
style, the hollow rings over its noisy points and the crosses of its disturbed ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.core.frames import where_rows
from workbench.judge.disturbed import cells_disturbed
from workbench.judge.stats import bimodal_split
from workbench.report.claims_rows import json_list
from workbench.report.plots.frame import DISTURBED_LABEL, MODES_LABEL, NOISY_LABEL
from workbench.report.styles import LINESTYLES, SeriesStyle, display_name, series_key, series_style
from workbench.roofs.ceilings import is_noisy


def series_columns(df: pd.DataFrame) -> list[str]:
    """Columns that tell lines apart: variant and backend, plus dtype, cache or run where one series
    has several (the device is the backend's, so naming it on every line only repeats it)."""
    cols = ["variant", "backend"]
    for extra in ("dtype", "cache", "run_id"):
        if extra in df and len(df) and df.groupby(["variant", "backend"])[extra].nunique(dropna=False).max() > 1:
            cols.append(extra)
    return cols


#: A series timed in more runs than this is drawn as one line (the median over its runs at each size) with a
#: band from the fastest run to the slowest: a line per run made 400 lines and 6 MB of SVG per figure for a
#: report of 100 runs, which no reader can tell apart.
MAX_RUN_LINES = 6


def pooled_over_runs(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One row per group of ``by`` (a series and a size, without the run) where the rows come from more than
    :data:`MAX_RUN_LINES` runs: the median of each float column over the group's runs, the first value of every
    other column, and ``noisy`` where most of them were (``df`` as it is otherwise). Why: a roofline of a
    report of 100 runs drew every run's point, a million-row report's figures 160 MB of SVG no reader could tell
    apart; the pooled points are what its time figure draws."""
    runs = run_order(df)
    if "run_id" not in df or len(runs) <= MAX_RUN_LINES or df.empty:
        return df
    keys = [c for c in by if c in df]
    data = df.assign(noisy=noisy_mask(df).astype(float))
    floats = [c for c in data.columns if c not in keys and data[c].dtype.kind in "fiu"]
    groups = data.groupby(keys, sort=False, dropna=False)
    firsts = groups[[c for c in data.columns if c not in keys and c not in floats]].first()
    out = pd.concat([firsts, groups[floats].median()], axis=1).reset_index()
    out["noisy"] = out["noisy"] > 0.5
    out["run_id"] = None  # a point of every run: no line style of one run
    out = out[[*[c for c in df.columns if c in out], *([] if "noisy" in df else ["noisy"])]]
    out.attrs = {**df.attrs, "pooled_runs": len(runs)}
    return out


def pooled_legend(ax: Axes, df: pd.DataFrame) -> None:
    """The legend line that says a figure's points are medians over runs (:func:`pooled_over_runs`)."""
    if df.attrs.get("pooled_runs"):
        ax.plot([], [], ls="none", label=f"median of {df.attrs['pooled_runs']} runs at each size")


def series_label(key: Any, cols: list[str], run_names: Mapping[str, str] | None = None,
                 styles: Mapping[str, SeriesStyle] | None = None) -> str:
    """A line's legend text: the series' name under ``styles`` (:func:`~workbench.report.styles.display_name`),
    then what else tells its lines apart (dtype, cache, run)."""
    key = key if isinstance(key, tuple) else (key,)
    d = dict(zip(cols, key, strict=False))
    extras = [str((run_names or {}).get(str(d[c]), d[c])) if c == "run_id" else str(d[c]) for c in cols[2:]]
    name = display_name(series_key(d.get("variant"), d.get("backend")), styles)
    return name + (f" ({', '.join(extras)})" if extras else "")


def line_style(key: Any, cols: list[str], styles: Mapping[str, SeriesStyle] | None,
               runs: list[str]) -> tuple[SeriesStyle, str]:
    """The series' colour/marker, and a line style that tells its runs apart (``runs``: :func:`run_order`)."""
    d = dict(zip(cols, key if isinstance(key, tuple) else (key,), strict=False))
    style = series_style(series_key(d.get("variant"), d.get("backend")), styles)
    run = str(d.get("run_id", ""))
    ls = LINESTYLES[runs.index(run) % len(LINESTYLES)] if run in runs else "-"
    return style, ls


def run_order(df: pd.DataFrame) -> list[str]:
    """The rows' runs in order of first appearance: a run's line style is its place here."""
    return [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df and len(df) else []


def noisy_mask(df: pd.DataFrame) -> np.ndarray:
    """Which rows are noisy: their ``noisy`` flag, or (rows stored before it) relative spread above 10%."""
    if not len(df):
        return np.zeros(0, bool)
    # the two columns the flag reads, not whole rows (called for every series of every figure)
    flags = df["noisy"].tolist() if "noisy" in df else [None] * len(df)
    spreads = df["rel_spread"].tolist() if "rel_spread" in df else [None] * len(df)
    return np.array([is_noisy({"noisy": f, "rel_spread": s}) for f, s in zip(flags, spreads, strict=True)], dtype=bool)


def disturbed_mask(df: pd.DataFrame) -> np.ndarray:
    """Which rows read "disturbed" (:func:`~workbench.judge.disturbed.cells_disturbed`: the wider of their IQR,
    ``iqr_s``, and their quartiles, ``q3_s - q1_s``, spans :data:`~workbench.judge.disturbed.DISTURBED_FLOOR` of
    their median or more), the rule the tables and sentences follow (``claims_rows.quartiles_wide``). A figure draws
    these apart from noisy cells: 03 and 08 drew them as ordinary hollow points, an 11x gap and a dip their own text
    said could not be read."""
    if not len(df) or "median_s" not in df:
        return np.zeros(len(df), bool)

    def col(c: str) -> np.ndarray | None:
        return pd.to_numeric(df[c], errors="coerce").to_numpy(float) if c in df else None

    return cells_disturbed(col("median_s"), col("iqr_s"), col("q1_s"), col("q3_s"))


def mark_disturbed(ax: Axes, x: Any, y: Any, color: Any, size: float = 7.0,
                   span: tuple[Any, Any] | None = None) -> None:
    """Disturbed points as their quartiles only: an x at each quartile (``span``: the low and high ends, in the
    plotted unit), dotted between, in their series' colour, unjoined and with no band, and nothing at the median:
    it is no value to read, so no mark stands at its height (01, 05: "draws a cross at a height it calls no value to
    read", when the cross stood at the median). Only where a point's quartiles are unknown (no ``span``, or not
    finite) does a single x stand at ``y``, the one place left to show the cell at all."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    lo, hi = ((np.asarray(v, dtype=float) for v in span) if span is not None
              else (np.full(len(xs), np.nan), np.full(len(xs), np.nan)))
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
        ax.vlines(xs[ok], lo[ok], hi[ok], colors=[color], linestyles=":", lw=1.2, alpha=0.8, zorder=3)
        ax.plot(np.r_[xs[ok], xs[ok]], np.r_[lo[ok], hi[ok]], ls="none", marker="x", ms=0.8 * size, mec=color,
                mew=1.5, alpha=0.8, zorder=4)
    if (~ok).any():
        ax.plot(xs[~ok], ys[~ok], ls="none", marker="x", ms=size, mec=color, mew=1.6, alpha=0.8, zorder=4)


def disturbed_legend(ax: Axes, n: int) -> None:
    """One legend entry for the ``n`` disturbed cells of a panel, counted apart from the noisy rings (merged across
    panels as theirs are: :func:`~workbench.report.plots.frame.finish`), and saying so: 01's legend read "hollow:
    noisy cell (7)" beside a text counting 10 noisy cells, 3 of them the crosses. It says what the x's mark (the
    quartiles) and that no mark stands at the median."""
    if n:
        ax.plot([], [], ls="none", marker="x", ms=6, mec="#555", mew=1.6,
                label=f"{DISTURBED_LABEL} ({n}), not among the hollow ones:\nits quartiles only, an x at each, "
                      "dotted\nbetween; no band and no point: its\nmedian is no value to read")


def mark_noisy(ax: Axes, x: Any, y: Any, color: Any, size: float = 7.0, marker: str = "o") -> None:
    """Noisy points drawn hollow in their series' own marker (white inside, the series colour around): a ring
    of one shape for every series hid the shape the legend gives each (readers of tutorials 01-05 found every
    point a circle beside a legend of squares, diamonds and triangles)."""
    ax.plot(x, y, ls="none", marker=marker, ms=size, mfc="white", mec=color, mew=1.3, zorder=4)


def noisy_legend(ax: Axes, n: int) -> None:
    """One legend entry for the ``n`` hollow points of a panel (:func:`~workbench.report.plots.frame.finish`
    merges the panels' into one)."""
    if n:
        ax.plot([], [], ls="none", marker="o", ms=6, mfc="white", mec="#555", mew=1.3,
                label=f"{NOISY_LABEL} ({n})")


def kernel_names(df: pd.DataFrame) -> list[str]:
    """The kernels of ``df`` in order, one panel each; [""] (one unnamed panel) where it names none."""
    return list(dict.fromkeys(df["kernel"])) if "kernel" in df and len(df) else [""]


def for_kernel(df: pd.DataFrame, kernel: str) -> pd.DataFrame:
    """The rows of one panel's kernel (all of them for the unnamed panel)."""
    return where_rows(df, df["kernel"] == kernel) if kernel and "kernel" in df else df


def mode_medians(df: pd.DataFrame) -> list[tuple[float, float] | None]:
    """Each row's two modes' medians (faster, slower) where its rounds fell in two modes
    (:func:`workbench.judge.stats.bimodal_split`, the rule the tables' "two modes: ..." prints), else None."""
    out: list[tuple[float, float] | None] = []
    for r in df.get("round_medians_s", pd.Series([None] * len(df), dtype=object)).tolist():
        split = bimodal_split([float(x) for x in json_list(r)])
        meds = sorted(float(np.median(m)) for m in split) if split else []
        out.append((meds[0], meds[-1]) if len(meds) >= 2 else None)
    return out


def mark_modes(ax: Axes, x: Any, modes: list[tuple[float, float]], color: Any, size: float = 6.0) -> None:
    """A two-mode cell as its two modes (a bar from one to the other, a tick at each), never one point: the tables
    print both modes and no headline (06 drew such cells as single points of the line)."""
    for xi, (lo, hi) in zip(x, modes, strict=True):
        ax.plot([xi, xi], [lo, hi], color=color, lw=1.0, alpha=0.8, zorder=3)
        ax.plot([xi, xi], [lo, hi], ls="none", marker="_", ms=size + 2, mew=2.0, color=color, zorder=4)


def modes_legend(ax: Axes, n: int) -> None:
    """One legend entry for the ``n`` two-mode cells of a panel."""
    if n:
        ax.plot([], [], ls="none", marker="$\u2195$", ms=8, color="#555",
                label=f"{MODES_LABEL} ({n}):\nits rounds' two modes, no median")

"""The axes of a figure: one real size parameter along x, ticked at the measured sizes, and times or plain
numbers up y, each in its own unit and never with an offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator

from workbench.core.units import fmt_tick_time
from workbench.report.sizes import XAxis, choose_x_axis, is_power_of_two, params_frame, tick_text

#: Most size ticks on one axis.
MAX_TICKS = 8


def with_x(df: pd.DataFrame) -> tuple[pd.DataFrame, XAxis]:
    """``df`` with columns ``_x`` (the axis parameter) and ``_group`` ("rows=256" for a parameter that
    splits lines; "" otherwise), and the axis chosen for it."""
    params = params_frame(df)
    axis = choose_x_axis(params)
    out = df.copy()
    out["_x"] = pd.to_numeric(params[axis.name], errors="coerce") if axis.name in params else np.nan
    groups = [[f"{c}={v}" for v in params[c].tolist()] for c in axis.group_by]
    out["_group"] = [" ".join(g) for g in zip(*groups, strict=True)] if groups else ""
    companions = {}
    for c in axis.companions:
        companions[c] = dict(zip(out["_x"], params[c], strict=True))
    out.attrs["companions"] = companions
    return out, axis


#: Characters of tick labels that fit side by side along a panel's size axis (a panel is about 3 inches wide).
AXIS_CHARS = 40


def ticks_that_fit(longest_label: int) -> int:
    """How many size ticks a panel holds without their labels touching: at most :data:`MAX_TICKS`, at least 2."""
    return max(2, min(MAX_TICKS, AXIS_CHARS // (longest_label + 2)))


def spread_ticks(v: list[float], log: bool, most: int = MAX_TICKS) -> list[float]:
    """At most ``most`` of the sorted sizes ``v``, spread evenly along the axis: on a log axis the measured size
    nearest each of evenly spaced log positions (every n-th of 500 sizes 1024 apart crowded the top of a log
    axis: "65,536 131,072 ..." ran into each other), on a linear one every n-th."""
    if not log:
        return v[:: int(np.ceil(len(v) / most))]
    logs = np.log(np.asarray(v, float))
    targets = np.linspace(logs[0], logs[-1], most)
    picked = {int(np.argmin(np.abs(logs - t))) for t in targets}
    return [v[i] for i in sorted(picked)]


def positive_finite(values: Iterable[Any]) -> np.ndarray:
    """The finite positive numbers among ``values`` (None and NaN left out), in order: at once for a sequence
    of numbers (a figure's 200,000 points were tested one by one, three times), one by one otherwise."""
    seq = values if isinstance(values, (np.ndarray, pd.Series, list, tuple)) else list(values)
    try:
        v = np.asarray(seq, dtype=float)
    except (TypeError, ValueError):
        v = np.asarray([float(x) for x in seq if x is not None and np.isfinite(x) and x > 0], float)
    return v[np.isfinite(v) & (v > 0)] if v.ndim == 1 else v.ravel()[:0]


def set_size_axis(ax: Axes, xs: Iterable[float], axis: XAxis, companions: Mapping[str, Mapping] | None = None
                  ) -> None:
    """Ticks at the measured sizes, named, never offset: log₂ spacing for powers of two, log for other wide
    ranges; parameters moving in lockstep (``rows`` beside ``cols``) under each tick."""
    v = np.unique(positive_finite(xs)).tolist()
    ax.set_xlabel(axis.label + (" (" + ", ".join(f"{c} below" for c in (companions or {})) + ")"
                                if companions else ""))
    if not v:
        return
    pow2 = is_power_of_two(v)
    if len(v) > 1 and v[-1] / v[0] >= 4:
        ax.set_xscale("log", base=2 if pow2 else 10)
    most = ticks_that_fit(max(len(line) for t in (v[0], v[-1]) for line in tick_text(t, pow2).split("\n")))
    ticks = v if len(v) <= most else spread_ticks(v, ax.get_xscale() == "log", most)
    labels = []
    for t in ticks:
        text = tick_text(t, pow2)
        for c, m in (companions or {}).items():
            if t in m:
                text += f"\n{c}={m[t]}"
        labels.append(text)
    if axis.label.startswith("one size:"):   # the axis names the size whole: a lone "2¹⁰" tick (05) named one part
        labels = [""] * len(ticks)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos, d=dict(zip(ticks, labels, strict=True)):
                                               d.get(x, "")))
    ax.xaxis.set_minor_locator(NullLocator())
    if len(v) == 1:
        ax.set_xlim(v[0] / 2, v[0] * 2) if ax.get_xscale() == "log" else ax.set_xlim(v[0] * 0.5, v[0] * 1.5)


def set_time_axis(ax: Axes, y: Iterable[float]) -> None:
    """Times in seconds, labelled each in its own unit ("20 µs", "1 ms"); log where they span > 20x."""
    v = positive_finite(y)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: fmt_tick_time(s)))
    if len(v) and v.max() / v.min() > 20:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if v.max() / v.min() < 1000 else (1.0,)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: fmt_tick_time(s)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.set_ylim(bottom=0)


def set_plain_axis(ax: Axes, y: Iterable[float], log_ratio: float | None = 20) -> None:
    """Plain numbers ("120", "0.5"), no "1e6" offset; log where the values span more than ``log_ratio``."""
    v = positive_finite(y)
    if log_ratio and len(v) and v.max() / v.min() > log_ratio:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: f"{s:,.4g}"))

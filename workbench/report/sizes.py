"""Which size parameter a plot's x axis shows, and how its ticks read.

A kernel's size is several named parameters (``rows``, ``cols``; ``m``, ``n``, ``k``). Plotting
against their product hides which one moved and, for gemm, puts m·n·k on the axis. Here the axis is
one real parameter; parameters that move with it are named in the tick labels, and parameters that
vary independently of it split the series into one line each.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def parse_params(value: Any) -> dict[str, int]:
    """A row's ``params`` (JSON text or a dict) as name -> int; {} when unreadable."""
    if isinstance(value, dict):
        d = value
    else:
        try:
            d = json.loads(value) if isinstance(value, str) and value else {}
        except ValueError:
            return {}
    out = {}
    for k, v in (d or {}).items():
        try:
            out[str(k)] = int(v)
        except (TypeError, ValueError):
            continue
    return out


def params_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One int column per size parameter, aligned with ``df``; falls back to ``size`` as ``size``."""
    if "params" in df and len(df):
        # each distinct value parsed once (a million rows hold a few hundred sizes), then spread to the rows
        try:
            codes, uniques = pd.factorize(df["params"], use_na_sentinel=True)
        except TypeError:  # unhashable values (dicts, in a frame built by hand): one per row
            codes, uniques = np.arange(len(df)), list(df["params"])
        rows = [parse_params(p) for p in uniques]
        if (codes < 0).any():  # a missing value reads as no sizes
            rows.append({})
            codes = np.where(codes < 0, len(rows) - 1, codes)
        if any(rows):
            names = list(dict.fromkeys(k for r in rows for k in r))
            table = pd.DataFrame([[r.get(n) for n in names] for r in rows], columns=names)
            return table.take(codes).set_axis(df.index)
    sizes = pd.to_numeric(df["size"], errors="coerce") if "size" in df else pd.Series(dtype=float)
    return pd.DataFrame({"size": sizes}, index=df.index)


@dataclass
class XAxis:
    """``name``: the parameter on the axis; ``label``: the axis title; ``group_by``: parameters that split
    lines; ``companions``: parameters that move in lockstep with ``name`` (shown in the tick labels)."""

    name: str
    label: str
    group_by: list[str] = field(default_factory=list)
    companions: list[str] = field(default_factory=list)


def choose_x_axis(params: pd.DataFrame) -> XAxis:
    """The parameter with the most distinct values (the last on a tie: ``cols`` over ``rows``)."""
    if params.empty or not len(params.columns):
        return XAxis("size", "size")
    counts = {c: params[c].nunique(dropna=True) for c in params.columns}
    varying = [c for c in params.columns if counts[c] > 1]
    if not varying:  # one size: the axis says so and names it whole (not one parameter as if it varied)
        import textwrap

        name = params.columns[-1]
        whole = " ".join(f"{c}={params[c].dropna().iloc[0]}" for c in params.columns if params[c].notna().any())
        return XAxis(name, "\n".join(textwrap.wrap(f"one size: {whole}", 40)) if len(params.columns) > 1 else name)
    name = max(reversed(varying), key=lambda c: counts[c])
    others = [c for c in varying if c != name]
    lockstep = [c for c in others if params.groupby(name)[c].nunique(dropna=True).max() <= 1]
    same = [c for c in lockstep if (params[c] == params[name]).all()]
    group_by = [c for c in others if c not in lockstep]
    label = " = ".join(c for c in params.columns if c == name or c in same)
    return XAxis(name, label, group_by, [c for c in lockstep if c not in same])


def is_power_of_two(values: Any) -> bool:
    v = [int(x) for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return bool(v) and all(x > 0 and (x & (x - 1)) == 0 for x in v)


def tick_text(value: float, powers_of_two: bool) -> str:
    """``2¹⁶`` for powers of two from 2¹⁰ on (below, the plain number reads better), else the integer."""
    iv = int(round(value))
    if powers_of_two and iv >= 1024:
        return "2" + str(iv.bit_length() - 1).translate(SUPERSCRIPT)
    return f"{iv:,}" if iv == value else f"{value:g}"

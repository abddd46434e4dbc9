"""A speed-up table as a reader sees it beside its sentences: the same readings, the same blanks.

Split from :mod:`workbench.report.claims` (which re-exports both public names): the sentences are one job, the
table shown beside them another; both read a verdict through :mod:`workbench.report.verdict_reading`, so a row
reads "disturbed" or "not settled" exactly where its sentence does.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.judge.few_rounds import is_paired_basis
from workbench.judge.verdicts import is_disturbed, verdict_label
from workbench.report.pair_words import fmt_floor
from workbench.report.ratio_text import interval_text, table_ratio
from workbench.report.verdict_reading import medians_disagree, reading, rests_on_disturbed, summary_reading


def shown_verdicts(table: pd.DataFrame, wide: bool = False) -> pd.DataFrame:
    """A speed-up table as a tutorial shows it beside its sentences: a disturbed comparison (floor past
    :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`) reads "disturbed" (or "faster, disturbed") as its
    sentence does, and keeps only the bound that sentence quotes (``ci_low`` of a faster, ``ci_high`` of a
    slower one): no floor, no speed-up, no other bound. A pair whose medians disagree with its interval
    (:func:`medians_disagree`) reads "not settled (medians disagree)", as its sentence does; one resting on a
    disturbed cell (:func:`rests_on_disturbed`, a ``cells_disturbed`` column) reads "disturbed", with no number
    ("faster, disturbed" / "slower, disturbed" where every quartile of one side lies beyond the other's,
    ``quartiles_apart``, as its sentence says who was faster).
    A table without a ``floor`` column gets the interval's half-width as one, so a disturbed row is caught all the
    same. The rest as they are. ``wide``: such rows are that wide for a reason that is no disturbance (two machines: the
    sentences' ``wide_because``), and read "too wide to read" ("faster, amount too wide to read") instead."""
    out = table.copy()
    if "verdict" not in out:
        return out
    if "floor" not in out and {"ci_low", "ci_high"} <= set(out):
        lo, hi = (pd.to_numeric(out[c], errors="coerce") for c in ("ci_low", "ci_high"))
        out["floor"] = (hi / lo) ** 0.5 - 1
    if "floor" not in out:
        return out
    verdicts = out["verdict"].astype(str)
    parted = pd.Series([medians_disagree(r) for r in out.to_dict("records")], index=out.index, dtype=bool)
    crossed = pd.Series([rests_on_disturbed(r) for r in out.to_dict("records")], index=out.index, dtype=bool)
    hit = (out["floor"].map(is_disturbed) | crossed) & verdicts.isin(["faster", "slower", "same", "inconclusive"])
    # a disturbed row's direction as its sentence reads it: a "faster" whose medians part says "could not tell" (07)
    said = pd.Series([x if x in ("faster", "slower") else "inconclusive" for x in map(reading, out.to_dict("records"))],
                     index=out.index, dtype=object)
    bases = out["basis"] if "basis" in out else pd.Series(None, index=out.index, dtype=object)
    # a disturbed cell whose quartiles lie apart: the direction its sentence gives ("numpy @ numpy was faster, the
    # amount not readable"), as README's "slower, disturbed" (01's table read "disturbed" beside that sentence)
    ways = [summary_reading(r) for r in out.to_dict("records")]
    out["verdict"] = [(w if w.endswith(", disturbed") else "disturbed") if c
                      else _wide_label(verdict_label(s, f, b), wide) if h
                      else "not settled (medians disagree)" if p else v
                      for v, s, f, h, p, c, b, w in zip(verdicts, said, out["floor"], hit, parted, crossed, bases,
                                                        ways, strict=True)]
    blank = {"floor": hit, "speedup": hit, "ci_low": hit & (said != "faster"), "ci_high": hit & (said != "slower")}
    for col, mask in blank.items():
        if col in out:
            out[col] = pd.to_numeric(out[col], errors="coerce").where(~mask)
    return out


def _wide_label(label: str, wide: bool) -> str:
    # the amount is unreadable, not the direction; "size" read as the array's size in a table with a size column (07)
    return label.replace(", disturbed", ", amount too wide to read").replace("disturbed", "too wide to read") if wide \
        else label



def verdict_table(table: pd.DataFrame, keep: list[str]) -> pd.DataFrame:
    """A speed-up table as a reader sees it beside its sentences (:func:`shown_verdicts`), its numbers in words:
    the ``keep`` columns, then "basis" where a row was judged on another basis than paired rounds, "speed-up
    (paired)" ("1.14×"; "speed-up" where some row was not paired), "interval" ("1.03-1.26×", its coverage in the
    header), "floor" ("±13%") and the verdict; blank where :func:`shown_verdicts` blanked a number."""
    shown = shown_verdicts(table)

    def times(x: Any, lo: Any, hi: Any) -> str:
        if pd.isna(x):
            return ""
        return table_ratio(float(x), *(float("nan") if pd.isna(b) else float(b) for b in (lo, hi)))

    coverage = pd.to_numeric(shown.get("coverage", pd.Series(dtype=float)), errors="coerce").dropna()
    label = f"interval ({coverage.iloc[0]:.1%})" if len(coverage) and coverage.nunique() == 1 else "interval"
    out = shown[keep].copy()
    # which rule each row was judged by: "(paired)" in the header only where every row was; else a basis column (03
    # printed "speed-up (paired)" above pairs judged unpaired, on few rounds at speed: judge/few_rounds.py)
    bases = [str(b) for b in shown.get("basis", pd.Series(dtype=object)).fillna("")]
    paired = bool(bases) and all(is_paired_basis(b) for b in bases)
    head = "speed-up (paired)" if paired or not bases else "speed-up"
    if bases and set(bases) != {"paired rounds"}:
        out["basis"] = bases
    out[head] = [times(x, lo, hi) for x, lo, hi in zip(
        shown["speedup"], table.get("ci_low", shown["ci_low"]), table.get("ci_high", shown["ci_high"]), strict=True)]
    out[label] = [interval_text(lo, hi) for lo, hi in zip(shown["ci_low"], shown["ci_high"], strict=True)]
    if label == "interval" and coverage.nunique() > 1:
        # rows of more than one coverage: each cell says its own, as its sentence does (03 headed "interval" a
        # column of 97.5% and 99% intervals, and the reader could not tell which was which)
        each = pd.to_numeric(shown.get("coverage"), errors="coerce")
        out[label] = [f"{t} ({100 * c:g}%)" if t and pd.notna(c) else t for t, c in zip(out[label], each, strict=True)]
    out["floor"] = shown["floor"].map(lambda f: "" if pd.isna(f) else fmt_floor(float(f)))
    out["verdict"] = shown["verdict"]
    return out

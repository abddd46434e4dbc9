"""A cell's time as a pivot beside the results table prints it, with that table's marks.

Its own module: it reads :func:`workbench.report.summary.summary_table`, which the claims modules (imported by the
summary's findings) may not import without a cycle."""

from __future__ import annotations

import pandas as pd

from workbench.core.units import fmt_seconds
from workbench.judge.stats import bimodal_split
from workbench.report.claims_rows import _num, json_list
from workbench.report.summary import summary_table
from workbench.report.tables import NOISY_MARK


def marked_times(rows: pd.DataFrame) -> list[str]:
    """Each row's time as a pivot beside the results table prints it: the median, or where its rounds fell in
    two modes both modes with their rounds (no headline: a median of disagreeing rounds headlines one mode), and
    the results table's own marks on it (:func:`~workbench.report.summary.summary_table`: "~ " before a noisy
    cell's time), so the two never part (06's pivot printed "41 µs" where the table printed "~ 41 µs ± 30 µs,
    disturbed"). A cell whose quartiles span past ±50% reads "disturbed" alone: no median, no "~"."""
    out = []
    shown = summary_table(rows)["median ± IQR"].astype(str).tolist() if len(rows) else []
    for r, text in zip(rows.to_dict("records"), shown, strict=True):
        split = bimodal_split([float(x) for x in json_list(r.get("round_medians_s"))])
        core = fmt_seconds(_num(r, "median_s")) if split is None else "two modes: " + " / ".join(
            f"{fmt_seconds(float(pd.Series(m).median()))} ({len(m)} round{'s' * (len(m) > 1)})" for m in split)
        if text.endswith("disturbed"):
            # "disturbed" alone: no median (docs/statistics.md: such a time "prints no median"), and no "~" either,
            # as the figures cross it out "not among the hollow ones" (06 printed "~ 63 µs, disturbed")
            out.append("disturbed")
            continue
        out.append(f"{NOISY_MARK} {core}" if text.startswith(NOISY_MARK) else core)
    return out

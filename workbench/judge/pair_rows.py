"""A run's rows as verdicts read them: each row's times (round medians or one stream), rows as plain mappings, and
every ok row paired with its baseline row, round by round. Apart from :mod:`workbench.judge.compare` so the
between-runs judges (:mod:`workbench.judge.anchored`) read pairs as the within-run ones do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.core.frames import records
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.judge import verdicts as vd
from workbench.judge.baselines import pair_positions
from workbench.judge.dips import ids_at_speed, set_aside_out
from workbench.judge.few_rounds import FewRounds, few_rounds
from workbench.judge.verdicts import parse_samples

if TYPE_CHECKING:
    import pandas as pd


def row_times(row: pd.Series | RowDict) -> tuple[np.ndarray, bool]:
    """The times a verdict rests on, and whether they are round medians.

    Per-round medians when the row has at least :data:`~workbench.judge.verdicts.MIN_ROUNDS` of them;
    otherwise the samples of its one stream (one round, or a row stored before rounds existed).
    """
    cached = getattr(row, "times", None) if isinstance(row, _Row) else None
    if cached is not None:
        return cached
    medians = parse_samples(row.get("round_medians_s"))
    out = (medians, True) if len(medians) >= vd.MIN_ROUNDS else (parse_samples(row.get("samples_s")), False)
    if isinstance(row, _Row):
        row.times = out
    return out


#: The columns a judged pair's rows are read by (:func:`judge_pair`, :func:`typical_spreads`, the A/A twins and
#: the tables' own columns): a row of every column took about 3.5 KB, and a million-row report held a kernel's
#: rows so (700 MB per 200,000).
PAIR_COLUMNS = ("run_id", "env_id", "device", "cell_key", "kernel", "variant", "backend", "dtype", "params", "size",
                "size_label", "mode", "cache", "timing_mode", "status", "library", "noisy", "rel_spread", "samples_s",
                "round_medians_s", "round_host_slowdowns", vd.ROUND_IDS, vd.PAIR_WITH, vd.PAIR_D, vd.PAIR_IDS,
                vd.TWIN_MEDIANS, vd.TWIN_IDS, vd.TWIN_PAIR_D, vd.TWIN_PAIR_IDS)


class _Row(dict):
    """A row as a plain mapping with its index label (``name``, as a pandas Series has): a report judges each
    of 100,000 rows through many ``row.get`` calls, which cost a pandas Series 5-10 µs each. ``times`` keeps
    :func:`row_times` once parsed (a reference row is judged against each of its group's rows, and each
    judgement asked for both sides' times twice: JSON parsing was a fifth of a large report's time)."""

    __slots__ = ("name", "times")

    def __init__(self, values: Mapping[str, Any], name: Any) -> None:
        super().__init__(values)
        self.name = name
        self.times: tuple[np.ndarray, bool] | None = None


def baseline_pairs(df: pd.DataFrame, baseline_variant: str | None = None, baseline_backend: str | None = None
                   ) -> tuple[list[tuple[pd.Series, pd.Series | None]], list[str]]:
    """Every ok row of ``df`` with its baseline row (or None), as :func:`pair_positions` orders them, and the
    columns that name a machine's run: the pairs :func:`judge_pair` judges one by one."""
    positions, machine = pair_positions(df, baseline_variant, baseline_backend)
    ok = df[df["status"] == Status.OK]
    rows = [_Row(rec, name) for name, rec in zip(ok.index, records(ok, PAIR_COLUMNS), strict=True)]
    return [(rows[i], None if j is None else rows[j]) for i, j in positions], machine


def _paired_rounds(base: Any, row: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Both rows' times, and whether they pair round by round: on the sweep rounds both were measured in
    (``round_ids``: a sweep gives undecided pairs extra rounds, so a reference may have more rounds than a
    contender settled earlier), else when both have the same number (≥ MIN_ROUNDS) of rounds."""
    a, a_rounds = row_times(base)
    b, b_rounds = row_times(row)
    if a_rounds and b_rounds:
        (kept_a, ids_a), (kept_b, ids_b) = set_aside_out(a, _ids(base, a)), set_aside_out(b, _ids(row, b))
        both = vd.aligned(kept_a, ids_a, kept_b, ids_b)  # rounds the slow host stretched pair with none
        if both is not None:
            return both[0], both[1], True
        if len(kept_a) < len(a) or len(kept_b) < len(b):  # too few rounds at speed to pair: judged unpaired
            return kept_a, kept_b, False
    return a, b, a_rounds and b_rounds and len(a) == len(b)


def _few_rounds(base: Any, row: Any) -> FewRounds | None:
    """Both rows' rounds at speed where the slow host left them fewer than MIN_ROUNDS shared rounds
    (:func:`workbench.judge.few_rounds.few_rounds`); None otherwise."""
    a, a_rounds = row_times(base)
    b, b_rounds = row_times(row)
    if not (a_rounds and b_rounds):
        return None
    return few_rounds(a, _ids(base, a), b, _ids(row, b))


def _ids(row: Any, medians: np.ndarray) -> list[str] | None:
    """A row's round ids, those of rounds set aside as taken while the host ran slow marked to pair with none."""
    return ids_at_speed(vd.round_ids(row.get(vd.ROUND_IDS)), list(medians),
                        list(parse_samples(row.get("round_host_slowdowns"))))


def _same_row(a: Any, b: Any) -> bool:
    """The same stored row: a table's rows by their index, plain rows by identity or cell key."""
    if a is b:
        return True
    name_a, name_b = getattr(a, "name", None), getattr(b, "name", None)
    if name_a is not None and name_b is not None:
        return bool(name_a == name_b)
    return a.get("cell_key") is not None and a.get("cell_key") == b.get("cell_key")

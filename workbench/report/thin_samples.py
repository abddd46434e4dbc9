"""A report's rows without the samples it does not read: each row that has round medians keeps, of its
``samples_s``, only their pooled median (as a one-number list), read a chunk of rows at a time.

Why: the samples are a report's largest column (a quick suite's rows carry hundreds each: 1.5 GB of text for a
million rows), and a report reads them for two things only: a verdict's times where a row has fewer than
:data:`~workbench.judge.verdicts.MIN_ROUNDS` round medians (those rows keep their samples), and the pooled median
that scales a figure's quartile band (:func:`workbench.report.plots.lines.quartile_band`), which the one-number
list gives exactly (``repr`` of a float reads back as the same float).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from workbench.judge.verdicts import MIN_ROUNDS

#: A JSON list of plain numbers (what numpy's text reader reads as JSON does).
_PLAIN_LIST = re.compile(r"\[[0-9eE.+\-, ]*\]\Z")


def _plain_numbers(texts: list[str]) -> tuple[np.ndarray, list[int]] | None:
    """Every number of ``texts`` (plain lists) in one array, and how many each list holds; None where numpy
    reads the text otherwise than JSON would (the rows then keep their samples)."""
    bodies = [t[1:-1] for t in texts]
    counts = [b.count(",") + 1 if b.strip() else 0 for b in bodies]
    joined = ",".join(b for b in bodies if b.strip())
    try:
        flat = np.fromstring(joined, sep=",") if joined else np.empty(0)  # noqa: NPY201 - the C parser, fast
    except ValueError:
        return None
    return (flat, counts) if len(flat) == sum(counts) else None


def pooled_medians(texts: list[str]) -> list[float | None] | None:
    """``np.median`` of each plain list of ``texts`` (None for an empty one); None when the texts do not read
    as plain numbers. Each list is decoded by orjson and its middle taken from ``sorted`` (what ``np.median``
    gives: the middle value, or the mean of the two middle ones); texts orjson refuses go the numpy way
    (:func:`_numpy_medians`). Why: numpy's text reader and its medians were half of reading a million-row
    report's rows."""
    from workbench.store.fast_json import loads

    out: list[float | None] = []
    try:
        for text in texts:
            s = sorted(loads(text))
            n = len(s)
            # float() after the sort: exact comparison orders the values as their float conversions do
            out.append(None if not n else float(s[n // 2]) if n % 2 else (float(s[n // 2 - 1]) + float(s[n // 2])) / 2)
    except (ValueError, TypeError):  # not JSON to orjson, or not numbers
        return _numpy_medians(texts)
    return out


def _numpy_medians(texts: list[str]) -> list[float | None] | None:
    """:func:`pooled_medians` by numpy's text reader, a length at a time."""
    got = _plain_numbers(texts)
    if got is None:
        return None
    flat, counts = got
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if counts else np.empty(0, np.int64)
    out: list[float | None] = [None] * len(texts)
    by_count: dict[int, list[int]] = {}
    for i, c in enumerate(counts):
        if c:
            by_count.setdefault(c, []).append(i)
    for c, rows in by_count.items():
        block = flat[starts[rows][:, None] + np.arange(c)]
        for i, m in zip(rows, np.median(block, axis=1).tolist(), strict=True):
            out[i] = m
    return out


def thin_samples(chunk: pd.DataFrame) -> pd.DataFrame:
    """``chunk`` with the ``samples_s`` of each row that has at least MIN_ROUNDS round medians replaced by their
    pooled median as a one-number JSON list (rows whose texts are not plain lists keep them); "at least" counts
    the finite positive ones, as a verdict does (:func:`workbench.judge.verdicts.clean`)."""
    if "samples_s" not in chunk or "round_medians_s" not in chunk or chunk.empty:
        return chunk
    rounds = chunk["round_medians_s"].tolist()
    samples = chunk["samples_s"].tolist()
    picked = [i for i, (r, s) in enumerate(zip(rounds, samples, strict=True))
              if isinstance(r, str) and isinstance(s, str) and _PLAIN_LIST.match(r) and _PLAIN_LIST.match(s)
              and r[1:-1].count(",") + 1 >= MIN_ROUNDS and r[1:-1].strip()]
    if not picked:
        return chunk
    got = _plain_numbers([rounds[i] for i in picked])
    if got is None:
        return chunk
    flat, counts = got
    good = (np.isfinite(flat) & (flat > 0)).astype(np.int64)  # what a verdict counts (verdicts.clean)
    ends = np.cumsum(counts)
    n_good = (np.concatenate(([0], np.cumsum(good)))[ends] - np.concatenate(([0], np.cumsum(good)))[ends - counts])
    picked = [i for i, n in zip(picked, n_good.tolist(), strict=True) if n >= MIN_ROUNDS]
    medians = pooled_medians([samples[i] for i in picked])
    if medians is None:
        return chunk
    for i, m in zip(picked, medians, strict=True):
        if m is None or math.isfinite(m):
            samples[i] = "[]" if m is None else f"[{m!r}]"
    chunk["samples_s"] = samples
    # a copy: pandas keeps the replaced column alive in the views of the block it came from (a million rows'
    # samples stayed in memory, 5 GB), while a copy holds only what the frame shows
    return chunk.copy()

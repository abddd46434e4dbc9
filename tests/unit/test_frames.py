"""workbench.core.frames.records gives what DataFrame.to_dict("records") gives, faster (a report's rows)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from workbench.core.frames import records


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def test_records_match_pandas_for_every_kind_of_column():
    df = pd.DataFrame({"i": [1, 2, 3], "f": [1.5, np.nan, 3.0], "s": ["x", None, "z"], "b": [True, False, True],
                       "n": pd.array([1, None, 3], dtype="Int64"), "o": [{"a": 1}, None, [1]],
                       "t": pd.to_datetime(["2026-01-01", None, "2026-01-03"])}, index=[7, 8, 9])
    ours, theirs = records(df), df.to_dict("records")
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs, strict=True):
        assert list(a) == list(b)
        for k in a:
            assert _same(a[k], b[k]) or (a[k] is pd.NaT and b[k] is pd.NaT), (k, a[k], b[k])
    picked = records(df, ["f", "missing", "s"])  # only the columns asked for, those the frame has
    assert [list(r) for r in picked] == [["f", "s"]] * 3
    assert picked[0] == {"f": 1.5, "s": "x"} and math.isnan(picked[1]["f"]) and _same(picked[1]["s"], theirs[1]["s"])
    assert records(df.iloc[:0]) == [] and records(pd.DataFrame(index=[1, 2])) == [{}, {}]

"""Issue 38: a report reads a row's samples only as the pooled median of rows that have round medians (a
million real rows' samples were 1.5 GB of a report's memory); what it shows is the same."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from workbench.judge.verdicts import parse_samples
from workbench.report.plots.lines import quartile_band
from workbench.report.thin_samples import pooled_medians, thin_samples


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    samples = [json.dumps(rng.uniform(1e-6, 1e-3, n).tolist()) for n in (1, 2, 7, 8, 191, 8)]
    rounds = ["[0.001, 0.002, 0.003]", "[0.001, 0.002, 0.003, 0.004]", "[0.001, 0.002]",  # 2: too few
              "[0.001, -0.002, 0.003]",  # two positive: a verdict uses the samples
              "[0.001, 0.002, 0.003]", None]
    return pd.DataFrame({"samples_s": samples, "round_medians_s": rounds, "median_s": [2e-3] * 6,
                         "q1_s": [1.6e-3] * 6, "q3_s": [2.4e-3] * 6})   # within ±50%: a band is drawn


def test_pooled_medians_are_numpys_median_of_each_list():
    texts = ["[3, 1, 2]", "[4.5, 1e-05, 2, 8]", "[]", "[0.25]", json.dumps(np.linspace(0.1, 9.7, 191).tolist())]
    got = pooled_medians(texts)
    assert got[2] is None
    for text, m in zip(texts, got, strict=True):
        if m is not None:
            assert m == float(np.median(np.asarray(json.loads(text), dtype=float)))


def test_only_rows_with_enough_round_medians_lose_their_samples_and_keep_their_pooled_median():
    df = _frame()
    before = df.copy()
    thin = thin_samples(df.copy())
    kept = [2, 3, 5]  # too few rounds, too few positive rounds, no rounds
    for i in range(len(df)):
        if i in kept:
            assert thin["samples_s"][i] == before["samples_s"][i]
        else:
            assert json.loads(thin["samples_s"][i]) == [float(np.median(json.loads(before["samples_s"][i])))]
            assert len(parse_samples(before["round_medians_s"][i])) >= 3
    # the figure's quartile band (scaled by the pooled median) is the same
    for a, b in zip(quartile_band(before, "median_s"), quartile_band(thin, "median_s"), strict=True):
        assert np.isfinite(a).all() and np.array_equal(a, b)


def test_text_that_is_not_a_plain_list_is_left_alone():
    df = pd.DataFrame({"samples_s": ["[1e-3, NaN]", "[1e-3, 2e-3]"], "round_medians_s": ["[1, 2, 3]", "[1, 2, x]"]})
    assert thin_samples(df.copy()).equals(df)


def test_the_samples_replaced_are_not_kept_alive_by_the_frame():
    """pandas kept a replaced column in the views of its old block: a million rows' samples (5 GB) stayed."""
    import gc
    import sys

    texts = [json.dumps([1e-3 * (1 + i / 7), 2e-3, 3e-3 + i * 1e-6]) for i in range(50)]
    base = [sys.getrefcount(t) for t in texts]
    df = pd.DataFrame.from_records([(t, "[0.001, 0.002, 0.003]", "saxpy", 1e-3) for t in texts],  # as SQL reads
                                   columns=["samples_s", "round_medians_s", "kernel", "median_s"])
    out = thin_samples(df)
    del df
    gc.collect()
    assert [sys.getrefcount(t) for t in texts] == base
    assert out["samples_s"][0] == "[0.002]"


def test_pooled_medians_by_sort_match_numpys_on_mixed_lists_and_fall_back_on_text_orjson_refuses():
    """The sorted-middle medians (orjson) are numpy's exactly: even and odd lengths, integers among floats,
    repeated values, huge and tiny magnitudes; a text orjson refuses goes the numpy way."""
    from workbench.report.thin_samples import _numpy_medians

    rng = np.random.default_rng(11)
    texts = []
    for n in range(1, 40):
        values = rng.lognormal(-9, 3, n).tolist()
        if n % 3 == 0:
            values[0] = int(n)  # an integer among floats
        if n % 5 == 0:
            values += values[:2]  # repeated values
        texts.append(json.dumps(values))
    texts.append("[9007199254740993, 1.5, 2]")  # an integer past 2**53
    got = pooled_medians(texts)
    assert got == _numpy_medians(texts)
    assert all(isinstance(m, float) for m in got)
    assert pooled_medians(["[1, 2,]", "[3]"]) is None  # not JSON: the numpy reader refuses it too
    assert pooled_medians(["[1e-5, 2e-5]", "[3, 1e400]"]) == _numpy_medians(["[1e-5, 2e-5]", "[3, 1e400]"])

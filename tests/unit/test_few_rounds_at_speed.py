"""A pair the slow host left with 2 shared rounds at speed (issue 39: tutorials run 3 rounds, and such pairs read
"disturbed", ±16% assumed noise on basis "one stream", beside two clean rounds a side): judged paired on them where
its scope has a typical paired spread, the same way by the batch and the one-pair paths; else wide, its basis saying
that too few rounds were left at speed and how many were set aside."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pandas.testing as pdt

from workbench.judge import compare as sc
from workbench.judge import verdicts as vd
from workbench.report.claims import pair_verdicts, verdict_sentence
from workbench.report.claims_cause import interval_makeup, noise_cause, round_ratios

PAIRED_BASIS = "2 paired rounds (1 set aside by the slow host)"
TOO_FEW_BASIS = "2 shared rounds at speed (1 set aside by the slow host), too few to pair"


def _row(variant: str, n: int, medians: list[float], slow: list[float] | None = None, library: int = 0) -> dict:
    return {"run_id": "R", "env_id": "e", "device": "cpu", "cell_key": f"k-{variant}-{n}", "kernel": "k",
            "variant": variant, "backend": "numpy", "dtype": "float32", "params": json.dumps({"n": n}), "size": n,
            "size_label": str(n), "mode": "eager", "cache": "hot", "status": "ok", "library": library,
            "noisy": False, "samples_s": json.dumps(medians), "round_medians_s": json.dumps(medians),
            "round_ids": json.dumps([f"s:{i}" for i in range(len(medians))]),
            "round_host_slowdowns": json.dumps(slow or [1.0] * len(medians)), "timing_mode": "host"}


def _quiet_group(seed: int = 1, spread: float = 0.02) -> list[dict]:
    """A group of a reference and four contenders, 3 clean rounds each, paired ratios scattering ~``spread``."""
    rng = np.random.default_rng(seed)
    base = [1e-3, 1.01e-3, 0.99e-3]
    return [_row("lib", 1024, base, library=1)] + [
        _row(f"v{j}", 1024, (np.array(base) * np.exp(rng.normal(0, spread, 3))).tolist()) for j in range(4)]


def _slowed_pair(ratio: float = 1.3) -> list[dict]:
    """A reference and a contender whose third round both took while the host ran slow (1.4x), felt by both: the
    round is set aside on both sides, and 2 clean rounds, ``ratio`` apart, are left."""
    slow = [1.0, 1.0, 1.4]
    return [_row("lib", 2048, [2e-3, 2.02e-3, 3.2e-3], slow=slow, library=1),
            _row("fast", 2048, [2e-3 / ratio, 2.02e-3 / (ratio * 1.01), 3.0e-3], slow=slow)]


def _both_paths(df: pd.DataFrame) -> pd.DataFrame:
    cols = list(sc.speedup_vs_baseline(df.iloc[0:0]).columns)
    fast, slow = sc.speedup_vs_baseline(df), sc._speedups_one_by_one(df, None, None, cols)
    pdt.assert_frame_equal(fast, slow, check_exact=True)
    return fast


def test_two_rounds_at_speed_are_paired_on_their_scopes_typical_spread() -> None:
    t = _both_paths(pd.DataFrame(_quiet_group() + _slowed_pair()))
    typical = t[t["variant"].str.startswith("v")]
    assert (typical["basis"] == "paired rounds").all() and typical["noise"].median() < 0.03
    v = t[t["variant"] == "fast"].iloc[0]
    assert v["basis"] == PAIRED_BASIS and v["verdict"] == "faster" and v["n_a"] == v["n_b"] == 2
    assert v["speedup"] == np.exp(np.median(np.log([1.3, 1.3 * 1.01])))
    # an interval near the scope's spread (±5% at most), not the ±16% a round assumed for one stream
    assert v["noise"] < 0.03 and math.log(v["ci_high"] / v["ci_low"]) / 2 < 0.05
    assert v["median_a"] == np.median([2e-3, 2.02e-3])  # the rounds paired, not the one set aside
    said = noise_cause(v.to_dict())
    assert "2 paired rounds at speed (1 more set aside as taken while the host ran slow)" in said
    assert "one stream" not in said
    makeup = interval_makeup(v.to_dict(), [1.3, 1.3 * 1.01])
    assert "these 2 rounds' own scatter" in makeup and "1 more set aside as taken while the host ran slow" in makeup
    # a round set aside of four leaves 3 shared: paired as before
    slow = [1.0, 1.0, 1.4, 1.0]
    ref = _row("lib", 2048, [2e-3, 2.02e-3, 3.2e-3, 2.01e-3], slow=slow, library=1)
    other = _row("fast", 2048, [1.54e-3, 1.55e-3, 3.0e-3, 1.56e-3], slow=slow)
    t = _both_paths(pd.DataFrame([*_quiet_group(), ref, other]))
    assert t[t["variant"] == "fast"].iloc[0]["basis"] == "paired rounds"


def test_the_interval_rests_on_prior_df_plus_one_degrees_of_freedom() -> None:
    rows = [pd.Series(r) for r in _slowed_pair(ratio=1.04)]
    v = sc.judge_pair(rows[0], rows[1], 0.02)
    a, b = (np.array(json.loads(r["round_medians_s"])[:2]) for r in rows)
    d = np.log(a) - np.log(b)
    noise, df = vd.paired_noise(d, 0.02)
    assert df == vd.PRIOR_DF + 1 and v["noise"] == noise
    half = vd._quantile(vd.CONFIDENCE, df) * vd.MEDIAN_EFFICIENCY * noise / math.sqrt(2)
    assert math.isclose(math.log(v["ci_high"]), vd.median(d) + half)
    assert v["basis"] == PAIRED_BASIS and v["verdict"] == "inconclusive"
    # rounds to run count the round the slow host took: more than the 3 already run
    assert "--rounds" in v["settle"] and "--rounds 3)" not in v["settle"]


def test_without_a_typical_spread_the_verdict_stays_wide_and_says_why() -> None:
    t = _both_paths(pd.DataFrame(_slowed_pair()))
    v = t[t["variant"] == "fast"].iloc[0]
    assert v["basis"] == TOO_FEW_BASIS and v["verdict"] == "inconclusive" and v["noise"] == vd.STREAM_NOISE
    assert "--rounds 4" in v["settle"]
    said = noise_cause(v.to_dict())
    assert said.startswith("too few of its rounds were left at speed to pair (2 shared, 1 set aside")
    assert "one stream" not in said


def test_rounds_set_aside_on_different_sides_leave_one_shared() -> None:
    rows = _quiet_group()
    ref, other = _slowed_pair()
    other = {**other, "round_medians_s": json.dumps([3.0e-3, 2e-3 / 1.3, 2.02e-3 / 1.3]),
             "round_host_slowdowns": json.dumps([1.4, 1.0, 1.0])}
    t = _both_paths(pd.DataFrame([*rows, ref, other]))
    v = t[t["variant"] == "fast"].iloc[0]
    assert v["basis"] == "1 shared round at speed (2 set aside by the slow host), too few to pair"
    assert v["noise"] == vd.STREAM_NOISE



def test_a_sentence_quotes_only_the_rounds_at_speed() -> None:
    """A round set aside on both sides carries the same marked id: it was paired back in, and 05-style sentences said
    "faster in every one of its 3 rounds" of a pair judged on 2."""
    ref, other = _slowed_pair()
    assert round_ratios(ref, other, True) == [2e-3 / (2e-3 / 1.3), 2.02e-3 / (2.02e-3 / (1.3 * 1.01))]
    df = pd.DataFrame([ref, other])
    said = verdict_sentence(pair_verdicts(df, "lib", "fast", "numpy").iloc[-1].to_dict(), "lib", "fast")
    assert "3 rounds" not in said

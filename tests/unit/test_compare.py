"""Speed-up statistics: bootstrap intervals, Mann-Whitney p-values, verdicts, run-to-run tables."""

import json

import numpy as np
import pandas as pd
import pytest

from workbench import stats_compare as sc
from workbench.report.sample_data import synthetic_results


def lognormal(median, n, seed, sigma=0.1):
    return median * np.random.default_rng(seed).lognormal(0.0, sigma, n)


def test_ci_contains_true_ratio_most_of_the_time():
    # True speed-up 1.3 (median 1.3 ms vs 1.0 ms); a 95% interval should cover it in most trials.
    covered = 0
    for seed in range(40):
        a, b = lognormal(1.3e-3, 30, 2 * seed), lognormal(1.0e-3, 30, 2 * seed + 1)
        r = sc.speedup(a, b, resamples=1000, seed=seed)
        covered += r.ci_low <= 1.3 <= r.ci_high
        assert r.ci_low <= r.speedup <= r.ci_high
    assert covered >= 34  # 95% nominal; percentile bootstrap of medians is a little narrow at n=30


def test_identical_distributions_are_ambiguous():
    for seed in range(10):
        r = sc.speedup(lognormal(1e-3, 40, seed), lognormal(1e-3, 40, seed + 100))
        assert r.verdict == "ambiguous", (seed, r)
        assert r.ci_low < 1 < r.ci_high or r.p_value > 0.05


def test_separated_distributions_give_faster_and_slower():
    slow, fast = lognormal(2e-3, 25, 1), lognormal(1e-3, 25, 2)
    r = sc.speedup(slow, fast)
    assert r.verdict == "faster" and r.p_value < 1e-6 and r.ci_low > 1.5 and abs(r.speedup - 2) < 0.2
    r2 = sc.speedup(fast, slow)
    assert r2.verdict == "slower" and r2.ci_high < 1
    assert r2.speedup == pytest.approx(1 / r.speedup)


def test_insufficient_samples_and_json_input():
    r = sc.speedup(json.dumps([1.0, 1.1]), "[0.5, 0.4, 0.45]")
    assert r.verdict == "insufficient samples" and r.n_a == 2 and r.n_b == 3
    assert r.speedup == pytest.approx(1.05 / 0.45)
    assert sc.speedup("[]", [1.0] * 10).verdict == "insufficient samples"


def test_bootstrap_is_seeded():
    a, b = lognormal(1e-3, 20, 1), lognormal(1.1e-3, 20, 2)
    assert sc.speedup(a, b) == sc.speedup(a, b)
    assert sc.speedup(a, b, seed=1).ci_low != sc.speedup(a, b, seed=2).ci_low


def test_fallback_mann_whitney_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    for _ in range(5):
        a, b = rng.normal(0, 1, 30), rng.normal(0.4, 1, 25)
        a[:5] = b[:5]  # some ties
        expected = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue
        assert sc._mann_whitney_normal(a, b) == pytest.approx(expected, rel=1e-6)


def test_compare_runs_matches_cells():
    df = pd.concat([synthetic_results("r1", seed=1), synthetic_results("r2", seed=2, slowdown=0.5)])
    t = sc.compare_runs(df, "r1", "r2")
    ok = t[(t["status_a"] == "ok") & (t["status_b"] == "ok")]
    assert len(ok) == 14 and set(ok["verdict"]) == {"faster"}
    assert ok["speedup"].between(1.8, 2.2).all()
    assert (ok["ci_low"] <= ok["speedup"]).all() and (ok["speedup"] <= ok["ci_high"]).all()
    bad = t[t["status_a"] != "ok"]
    assert len(bad) == 2 and bad["verdict"].str.startswith("not comparable").all()
    same = sc.compare_runs(pd.concat([synthetic_results("r1", seed=1), synthetic_results("r3", seed=3)]), "r1", "r3")
    assert (same.loc[same["status_a"] == "ok", "verdict"] != "faster").sum() >= 12


def test_compare_runs_unknown_run_names_valid_ones():
    df = synthetic_results("r1")
    with pytest.raises(ValueError, match="r1"):
        sc.compare_runs(df, "r1", "nope")


def test_speedup_vs_baseline():
    df = synthetic_results("r1")
    t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
    assert set(t["baseline_variant"]) == {"numpy"}
    saxpy = t[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel")]
    assert len(saxpy) == 4 and set(saxpy["verdict"]) == {"faster"}
    assert saxpy["speedup"].between(1.2, 1.9).all()
    gemm = t[(t["kernel"] == "gemm") & (t["variant"] == "naive")]
    assert set(gemm["verdict"]) == {"slower"}
    assert set(t.loc[t["variant"] == "numpy", "verdict"]) == {"baseline"}
    # by backend: the same variant on another backend, else that backend's library/first variant
    tb = sc.speedup_vs_baseline(df, baseline_backend="numpy")
    assert set(tb["baseline_backend"].dropna()) == {"numpy"}
    # unknown baseline variant: no baseline, no crash
    assert set(sc.speedup_vs_baseline(df, baseline_variant="nope")["verdict"]) == {"no baseline"}


def test_compare_runs_with_several_machines_in_a_run():
    # a merged run holding the same cells from two machines is compared machine by machine
    a = pd.concat([synthetic_results("r1", seed=1, device="box-1", env_id="e1"),
                   synthetic_results("r1", seed=2, device="box-2", env_id="e2", slowdown=3.0)])
    b = pd.concat([synthetic_results("r2", seed=3, device="box-1", env_id="e1"),
                   synthetic_results("r2", seed=4, device="box-2", env_id="e2", slowdown=3.0)])
    t = sc.compare_runs(pd.concat([a, b]), "r1", "r2")
    assert "env_id" in t.columns and len(t) == 2 * 16
    ok = t[t["status_a"] == "ok"]
    assert ok["speedup"].between(0.8, 1.25).all()  # box-1 never meets box-2's 3x slower rows
    assert (ok["device_a"] == ok["device_b"]).all() and (ok["env_a"] == ok["env_b"]).all()

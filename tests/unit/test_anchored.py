"""Between two runs, a variant judged against its baseline in each run (issue 36): a rerun in which one variant
does 10% more work is called slower though the host moved every cell more than that between the runs, identical
variants are not called, and a baseline that changed is never an anchor."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from workbench.judge.anchored import BASIS
from workbench.judge.compare import compare_runs


def _run(run_id: str, rng: np.random.Generator, factors: dict[str, float], kernels: int = 12,
         host: float = 0.15, own: float = 0.01) -> pd.DataFrame:
    """``kernels`` kernels of three variants (``lib``, the library baseline; ``v1``; ``v2``), 5 rounds each. Each
    round moves every variant of a kernel alike (the host: ``host`` log sigma a round, and a drift of the whole
    run within the 5% a comparison counts as the host's); each cell's own round-to-round noise is ``own``;
    ``factors`` scales a variant's time in this run."""
    rows = []
    shift = 0.03 * rng.uniform(-1, 1)
    for k in range(kernels):
        rounds = shift + host * rng.standard_normal(5)
        for variant in ("lib", "v1", "v2"):
            base = 1e-4 * (1 + k) * (1.3 if variant == "v1" else 1.0) * factors.get(variant, 1.0)
            medians = (base * np.exp(rounds + own * rng.standard_normal(5))).tolist()
            rows.append({"run_id": run_id, "kernel": f"k{k}", "variant": variant, "backend": "numpy",
                         "dtype": "float32", "params": json.dumps({"n": 1000}), "mode": "eager", "cache": "hot",
                         "status": "ok", "library": variant == "lib", "env_id": "env", "threads": "torch 2",
                         "cell_key": f"k{k}|{variant}", "round_medians_s": json.dumps(medians),
                         "round_ids": json.dumps([f"r{i}" for i in range(5)]), "median_s": float(np.median(medians)),
                         "samples_s": json.dumps(medians), "noisy": False, "size": 1000, "size_label": "n=1000"})
    return pd.DataFrame(rows)


def _compare(seed: int, a: dict[str, float], b: dict[str, float], **kw) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.concat([_run("A", rng, a, **kw), _run("B", rng, b, **kw)], ignore_index=True)
    return compare_runs(df, "A", "B")


def test_a_variant_that_got_10_percent_slower_is_seen_against_its_baseline():
    seen = 0
    for seed in range(5):
        t = _compare(seed, {}, {"v2": 1.10})
        v2 = t[t["variant"] == "v2"]
        assert (v2["basis"] == BASIS).mean() >= 0.8 and (v2["anchor"].dropna() == "lib@numpy").all()
        seen += int((v2["verdict"] == "slower").sum())
        assert not t.loc[t["variant"] != "v2", "verdict"].isin(["faster", "slower"]).any()
    assert seen >= 0.9 * 5 * 12
    assert (t.loc[t["variant"] == "lib", "basis"] != BASIS).all()  # the baseline is judged as it was


def test_identical_runs_are_not_called_changed_against_their_baselines():
    calls = sum(int(_compare(100 + s, {}, {})["verdict"].isin(["faster", "slower"]).sum()) for s in range(10))
    assert calls <= 0.02 * 10 * 36


def test_a_baseline_that_may_have_changed_is_no_anchor():
    """A library upgrade (another environment), other threads, or a baseline that is no library call: each may
    have moved the baseline itself, and every ratio against it with it."""
    rng = np.random.default_rng(7)
    a, b = _run("A", rng, {}, host=0.01), _run("B", rng, {"lib": 0.5}, host=0.01)
    for change in ({"env_id": "env-upgraded"}, {"threads": "torch 1"}, {"library": False}):
        b2 = b.copy()
        for col, value in change.items():
            b2.loc[b2["variant"] == "lib", col] = value
            if col == "library":
                a.loc[a["variant"] == "lib", col] = value
        t = compare_runs(pd.concat([a, b2], ignore_index=True), "A", "B")
        assert t["anchor"].isna().all() and (t["basis"] != BASIS).all(), change
        assert not t.loc[t["variant"] != "lib", "verdict"].isin(["faster", "slower"]).any(), change
        a.loc[a["variant"] == "lib", "library"] = True


def test_the_absolute_verdict_stays_where_it_sees_more():
    t = _compare(8, {}, {}, host=0.0, own=0.05)  # no host drift: each cell's own rounds are the noise
    anchored = t[t["anchor"].notna()]
    absolute = t[t["anchor"].isna() & (t["variant"] != "lib")]
    assert len(absolute) > 0
    assert math.isfinite(t.attrs["anchored_noise"]) and t.attrs["anchored"] == len(anchored)


def test_several_runs_a_side_judge_a_variant_against_its_baseline_too():
    from workbench.judge.anchored import BASIS_RUNS
    from workbench.judge.replicates import compare_run_groups

    rng = np.random.default_rng(11)
    runs = {f"A{i}": {} for i in range(3)} | {f"B{i}": {"v2": 1.08} for i in range(3)}
    df = pd.concat([_run(r, rng, f, host=0.08) for r, f in runs.items()], ignore_index=True)
    t = compare_run_groups(df, ["A0", "A1", "A2"], ["B0", "B1", "B2"])
    v2 = t[t["variant"] == "v2"]
    assert (v2["basis"] == BASIS_RUNS).mean() >= 0.8 and (v2["verdict"] == "slower").mean() >= 0.9
    assert not t.loc[t["variant"] != "v2", "verdict"].isin(["faster", "slower"]).any()
    assert t.attrs["anchored"] == int((t["basis"] == BASIS_RUNS).sum())


def test_one_run_with_a_disturbed_round_does_not_widen_a_side_of_three():
    from workbench.judge.replicates import side_level

    steady = [(0.010, 0.004), (0.012, 0.004), (0.008, 0.150)]  # the third run: one round far off, median sound
    _, se = side_level(steady, tau=0.005)
    assert se < 0.01
    _, se_two = side_level(steady[1:], tau=0.005)  # two runs: every run's error counts
    assert se_two > 0.05

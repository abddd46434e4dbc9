"""Speed-up tables end to end: calibrated verdicts through compare_runs and speedup_vs_baseline.

Rows are built as the store returns them (JSON text in ``samples_s`` and ``round_medians_s``), with the
noise model measured on our shared 2-core machines: each cell of each run gets its own offset (run to
run, ±15% here), the machine drifts from round to round (common to the cells of a round), and samples
inside one stream are tight.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from workbench.core.record import cell_key
from workbench.judge import compare as sc
from workbench.judge import verdicts as vd
from workbench.report.sample_data import synthetic_results

ROUNDS = 5


def with_rounds(df, seed, rounds=ROUNDS, cell_sigma=0.15, round_sigma=0.03, drift=0.0, scale=None):
    """``df``'s ok rows re-measured in ``rounds`` rounds: a per-row offset (run to run), drift common to
    every row of a round, round noise, and 8 tight samples per round. ``scale`` maps a row to a factor."""
    rng = np.random.default_rng(seed)
    df = df.astype({"rounds": object, "round_medians_s": object, "noisy": object})
    drifts = rng.normal(0, drift, rounds)
    for i in df.index[df["status"] == "ok"]:
        base = float(df.at[i, "median_s"]) * (scale(df.loc[i]) if scale else 1.0)
        medians = base * np.exp(rng.normal(0, cell_sigma) + drifts + rng.normal(0, round_sigma, rounds))
        samples = np.concatenate([m * np.exp(rng.normal(0, 0.01, 8)) for m in medians])
        df.at[i, "rounds"] = rounds
        df.at[i, "round_medians_s"] = json.dumps(medians.tolist())
        df.at[i, "samples_s"] = json.dumps(samples.tolist())
        df.at[i, "median_s"] = float(np.median(medians))
        df.at[i, "noise"] = vd.rel_spread(medians)
        df.at[i, "noisy"] = vd.is_noisy(df.at[i, "noise"])
    return df


def many_cells(run_id, n_kernels=6):
    """Several kernels' worth of synthetic cells (2 kernels x 7 sizes/variants each), renamed apart."""
    parts = []
    for j in range(n_kernels):
        d = synthetic_results(run_id, seed=j, with_failures=False)
        d["kernel"] = d["kernel"] + f"_{j}"
        d["cell_key"] = [cell_key(r.kernel, r.variant, r.backend, r.dtype, json.loads(r.params), r.mode, r.cache)
                         for r in d.itertuples()]
        parts.append(d)
    return pd.concat(parts, ignore_index=True)


def called(t):
    return int(t["verdict"].isin(["faster", "slower"]).sum())


def test_aa_between_runs_with_run_level_offsets_is_same():
    a = with_rounds(many_cells("A"), seed=1)
    b = with_rounds(many_cells("B"), seed=2)
    t = sc.compare_runs(pd.concat([a, b]), "A", "B")
    assert len(t) == 84 and set(t["basis"]) == {"rounds"}
    assert called(t) <= 0.05 * len(t), t["verdict"].value_counts()
    # ±15% run to run: no cell can be called "same" within 10%; they are inconclusive, saying so
    assert (t["verdict"] == "inconclusive").mean() >= 0.9 and "same" not in set(t["verdict"])
    assert (t.loc[t["verdict"] == "inconclusive", "floor"] > vd.SAME_WITHIN).all()
    assert 0.08 < t.attrs["run_noise"] < 0.3  # the ±15% cell offsets, seen across cells
    assert (t["ci_low"] <= t["speedup"]).all() and (t["speedup"] <= t["ci_high"]).all()


def test_regression_between_runs_is_slower_and_the_rest_same():
    a = with_rounds(many_cells("A"), seed=3, cell_sigma=0.05)
    changed = ("saxpy_0", "saxpy_1")  # 16 of 84 cells get 2x slower
    slow = lambda r: 2.0 if r["kernel"] in changed else 1.0  # noqa: E731
    b = with_rounds(many_cells("B"), seed=4, cell_sigma=0.05, scale=slow)
    t = sc.compare_runs(pd.concat([a, b]), "A", "B")
    saxpy = t[t["kernel"].isin(changed)]
    assert (saxpy["verdict"] == "slower").mean() >= 0.95 and saxpy["speedup"].between(0.4, 0.62).all()
    rest = t[~t["kernel"].isin(changed)]
    assert called(rest) <= 0.05 * len(rest)


def test_old_rows_without_rounds_need_a_gap_far_beyond_drift():
    """One stream per side (rows stored before rounds): 2x is called, the ±15% offsets are not."""
    aa = sc.compare_runs(pd.concat([synthetic_results("r1", seed=1), synthetic_results("r3", seed=3)]), "r1", "r3")
    ok = aa[aa["status_a"] == "ok"]
    assert set(ok["basis"]) == {"one stream"} and set(ok["verdict"]) == {"inconclusive"}
    df = pd.concat([synthetic_results("r1", seed=1), synthetic_results("r2", seed=2, slowdown=0.5)])
    t = sc.compare_runs(df, "r1", "r2")
    ok = t[(t["status_a"] == "ok") & (t["status_b"] == "ok")]
    assert len(ok) == 14 and set(ok["verdict"]) == {"faster"}
    assert ok["speedup"].between(1.8, 2.2).all()
    assert (ok["ci_low"] <= ok["speedup"]).all() and (ok["speedup"] <= ok["ci_high"]).all()
    bad = t[t["status_a"] != "ok"]
    assert len(bad) == 2 and bad["verdict"].str.startswith("not comparable").all()


def test_a_run_with_rounds_against_an_old_run_is_judged_as_one_stream():
    a = synthetic_results("old", seed=1)
    b = with_rounds(synthetic_results("new", seed=2), seed=5, cell_sigma=0.0)
    t = sc.compare_runs(pd.concat([a, b]), "old", "new")
    ok = t[t["status_a"] == "ok"]
    assert set(ok["basis"]) == {"one stream"} and set(ok["verdict"]) == {"inconclusive"}
    assert ok["settle"].str.contains("--rounds").all()


def test_noisy_rows_are_marked_in_the_table():
    a = with_rounds(many_cells("A", 2), seed=6, round_sigma=0.3)
    b = with_rounds(many_cells("B", 2), seed=7, round_sigma=0.01)
    t = sc.compare_runs(pd.concat([a, b]), "A", "B")
    assert t["noisy"].mean() > 0.8  # A's rows spread ~30% across rounds
    assert called(t) <= 0.05 * len(t)


def test_compare_runs_unknown_run_names_valid_ones():
    df = synthetic_results("r1")
    with pytest.raises(ValueError, match="r1"):
        sc.compare_runs(df, "r1", "nope")


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
    assert set(ok["verdict"]) == {"inconclusive"}  # one stream each: never "same" within 10%


# -- within a run ------------------------------------------------------------------------------

def test_paired_rounds_find_a_real_gap_despite_drift():
    """numba_parallel 2x faster than numpy, measured in the same rounds while the machine drifts ±30%."""
    fast = lambda r: 0.5 if r["variant"] == "numba_parallel" else 1.0  # noqa: E731
    calls = []
    for seed in range(20):
        df = with_rounds(synthetic_results("r", with_failures=False), seed=seed, cell_sigma=0.0, drift=0.3,
                         scale=fast)
        t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
        saxpy = t[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel")]
        assert set(saxpy["basis"]) == {"paired rounds"}
        calls += list(saxpy["verdict"])
    assert calls.count("faster") / len(calls) >= 0.95


def test_paired_rounds_call_an_unchanged_variant_same():
    df0 = synthetic_results("r", with_failures=False)
    numpy = df0[df0["variant"] == "numpy"].set_index(["kernel", "params"])["median_s"]
    twin = df0["variant"] == "numba_parallel"  # as fast as numpy, truly
    df0.loc[twin, "median_s"] = [numpy[k] for k in zip(df0.loc[twin, "kernel"], df0.loc[twin, "params"],
                                                       strict=True)]
    calls = []
    for seed in range(20):
        df = with_rounds(df0, seed=seed, cell_sigma=0.0, drift=0.3, round_sigma=0.04)
        t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
        calls += list(t.loc[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel"), "verdict"])
    assert sum(c in ("faster", "slower") for c in calls) <= 0.05 * len(calls)


def test_three_rounds_a_disturbed_round_does_not_hide_a_gap():
    """Three rounds (bench's default): a round in which the baseline ran 3x slow (the machine was busy)
    does not hide numba's 2x: the run's typical paired spread is the noise, not the disturbed pair's."""
    df = with_rounds(synthetic_results("r", with_failures=False), seed=9, rounds=3, cell_sigma=0.0,
                     round_sigma=0.03, scale=lambda r: 0.5 / 0.6 if r["variant"] == "numba_parallel" else 1.0)
    hit = df.index[(df["variant"] == "numpy") & (df["kernel"] == "saxpy") & (df["size"] >= 2**20)]
    for i in hit:  # two of the seven pairs
        rounds = json.loads(df.at[i, "round_medians_s"])
        rounds[1] *= 3.0
        df.at[i, "round_medians_s"] = json.dumps(rounds)
    t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
    saxpy = t[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel")]
    large = saxpy[saxpy["size"] >= 2**20]  # where numba's 0.6x per element dominates the fixed cost
    assert set(large["verdict"]) == {"faster"} and set(large["basis"]) == {"paired rounds"}
    assert (large["floor"] < 0.5).all()


def test_speedup_vs_baseline_on_one_stream_rows():
    df = synthetic_results("r1")
    t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
    assert set(t["baseline_variant"]) == {"numpy"} and set(t["basis"].dropna()) == {"one stream"}
    saxpy = t[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel")]
    assert len(saxpy) == 4 and saxpy["speedup"].between(1.2, 1.9).all()
    assert set(saxpy["verdict"]) <= {"inconclusive", "faster"}  # 1.2-1.7x from one stream each: not far enough
    gemm = t[(t["kernel"] == "gemm") & (t["variant"] == "naive")]
    assert set(gemm["verdict"]) == {"slower"}  # ~25x: far beyond any drift
    assert set(t.loc[t["variant"] == "numpy", "verdict"]) == {"baseline"}
    # by backend: the same variant on another backend, else that backend's library/first variant
    tb = sc.speedup_vs_baseline(df, baseline_backend="numpy")
    assert set(tb["baseline_backend"].dropna()) == {"numpy"}
    # unknown baseline variant: no baseline, no crash
    assert set(sc.speedup_vs_baseline(df, baseline_variant="nope")["verdict"]) == {"no baseline"}


def test_rows_with_different_round_counts_are_not_paired():
    df = with_rounds(synthetic_results("r", with_failures=False), seed=8, cell_sigma=0.0)
    i = df.index[(df["kernel"] == "saxpy") & (df["variant"] == "numba_parallel")][0]
    df.at[i, "round_medians_s"] = json.dumps(json.loads(df.at[i, "round_medians_s"])[:4])
    t = sc.speedup_vs_baseline(df, baseline_variant="numpy")
    basis = t.loc[(t["kernel"] == "saxpy") & (t["variant"] == "numba_parallel"), "basis"].tolist()
    assert sorted(basis) == ["paired rounds"] * 3 + ["rounds"]


def test_verdict_names_are_listed():
    assert set(sc.VERDICTS) == {"faster", "slower", "same", "inconclusive", "insufficient samples"}
    assert sc.parse_samples("[1e-3, null, -1, 2e-3]").tolist() == [1e-3, 2e-3]
    assert sc.parse_samples(float("nan")).size == 0


# -- the CI gate: workbench compare A B --fail-on slower [--threshold T] ---------------------------

def stored(tmp_path, *runs):
    """A store holding ``runs`` (DataFrames as above, each with its own run_id); returns (store, ids)."""
    from workbench.report.sample_data import synthetic_environment
    from workbench.store.database import Store

    store = Store(tmp_path / "results.sqlite")
    store.add_environment("env-demo", synthetic_environment())
    ids = []
    for df in runs:
        rid = store.new_run(name="demo", env_id="env-demo")
        for row in df.assign(run_id=rid).to_dict("records"):
            store.record(row)
        store.set_run_status(rid, "finished", wall_s=3.0)
        ids.append(rid)
    return store, ids


def gate(store, ids, *extra):
    from workbench.cli import main

    return main(["compare", *ids, "--store", str(store.path), "--fail-on", "slower", *extra])


def test_gate_passes_an_aa_comparison(tmp_path, capsys):
    store, ids = stored(tmp_path, with_rounds(many_cells("A"), seed=11), with_rounds(many_cells("B"), seed=12))
    assert gate(store, ids) == 0
    out, err = capsys.readouterr()
    assert "gate passed" in err and "84 cells:" in out and "run-to-run noise" in out
    assert gate(store, ids, "--threshold", "0") == 0  # no sure slow-down at all


def test_gate_fails_on_a_sure_regression_and_names_the_cells(tmp_path, capsys):
    changed = ("gemm_0",)  # 6 of 84 cells get 2x slower
    slow = lambda r: 2.0 if r["kernel"] in changed else 1.0  # noqa: E731
    store, ids = stored(tmp_path, with_rounds(many_cells("A"), seed=13, cell_sigma=0.03),
                        with_rounds(many_cells("B"), seed=14, cell_sigma=0.03, scale=slow))
    assert gate(store, ids) == 1
    err = capsys.readouterr().err
    assert "gate FAILED: 6 cell(s) surely slower by more than 5%" in err
    assert err.count("gemm_0 ") == 6 and "saxpy" not in err
    assert main_compare(store, ids) == 0  # without --fail-on: a table, exit 0


def test_gate_on_runs_with_no_cell_in_common_is_refused(tmp_path, capsys):
    """Hostile round five (issue 38, group 15): two runs that share no cell printed "(no matching cells)", then
    "gate passed" and exit 0: a CI gate passed on nothing."""
    other = many_cells("B").assign(kernel=lambda d: "other_" + d["kernel"])
    store, ids = stored(tmp_path, with_rounds(many_cells("A"), seed=15), with_rounds(other, seed=16))
    assert gate(store, ids) == 2
    err = capsys.readouterr().err
    assert "--fail-on: no cell of the two sides matches" in err and "gate passed" not in err
    assert main_compare(store, ids) == 0  # without --fail-on: the (empty) table, as before


def main_compare(store, ids):
    from workbench.cli import main

    return main(["compare", *ids, "--store", str(store.path)])


def test_gate_threshold_forms_and_limits(tmp_path, capsys):
    slow = lambda r: 1.3 if r["kernel"] == "saxpy_0" else 1.0  # noqa: E731  8 cells 1.3x slower
    store, ids = stored(tmp_path, with_rounds(many_cells("A"), seed=15, cell_sigma=0.02, round_sigma=0.01),
                        with_rounds(many_cells("B"), seed=16, cell_sigma=0.02, round_sigma=0.01, scale=slow))
    assert gate(store, ids, "--threshold", "5%") == 1
    assert gate(store, ids, "--threshold", "0.05") == 1
    assert gate(store, ids, "--threshold", "50%") == 0  # slower, but by less than the threshold
    assert gate(store, ids, "--threshold", "0.5") == 0
    capsys.readouterr()
    for bad in ("abc", "-5%", "150%", "1.5", "5%%", ""):
        assert gate(store, ids, f"--threshold={bad}") == 2, bad
        err = capsys.readouterr().err
        assert repr(bad) in err and "'5%'" in err and "'0.05'" in err


def test_threshold_parsing():
    from workbench.cli.cmd_compare import parse_threshold

    assert parse_threshold("5%") == pytest.approx(0.05) == parse_threshold(" 0.05 ")
    assert parse_threshold("0") == 0 and parse_threshold("12.5 %") == pytest.approx(0.125)
    with pytest.raises(ValueError, match="'x'"):
        parse_threshold("x")


def test_compare_table_labels_coverage_floors_and_what_would_settle(tmp_path, capsys):
    store, ids = stored(tmp_path, synthetic_results("A", seed=1), synthetic_results("B", seed=3))
    assert main_compare(store, ids) == 0
    out = capsys.readouterr().out
    assert "99% interval" in out and "95% interval" not in out and "could see" in out
    # one stream a side between runs: every interval is wider than ±50%, so none is printed (issue 39)
    assert "disturbed" in out and "inconclusive (±" not in out and "same within" not in out
    assert "14 disturbed" in out and "14 comparison(s) disturbed (intervals of ±50% or wider are not printed" in out
    assert not re.search(r"±\d{3,}", out) and "[" not in out.split("could see")[1].split("16 cells")[0]
    assert "inconclusive cell(s) would be settled by measure both in rounds (--rounds 3 or more)" in out


def test_thread_pools_that_differ_are_quoted_by_what_differs():
    # 07 quoted both runs' whole thread strings (48 words) to show that numba's pool went from 2 threads to 1
    from workbench.judge.between_runs import pools_diff

    rest = "blas:openblas 2, openmp:openmp 2; OpenMP wait: spin 10000 then sleep; malloc: default"
    said = pools_diff(f"numba 2, {rest}", f"numba 1, {rest}")
    assert said == "'numba 2' against 'numba 1' (4 other settings alike)"
    # nothing shared to pair a difference with: both whole, as before
    assert pools_diff("a 1", "b 2") == "'a 1' against 'b 2'"

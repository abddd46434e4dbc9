"""Several runs a side (issue 36): ``compare A1,A2,A3 B1,B2,B3`` judges each cell on the mean of its runs'
medians, with the run-to-run noise measured between the runs of each side, so a change smaller than one pair of
runs can see is seen with more runs, and identical code is still not called faster or slower."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from workbench.judge import verdicts as vd
from workbench.judge.compare import compare_runs
from workbench.judge.replicates import compare_run_groups, replicate_noise, side_level


def _run(run_id: str, rng: np.random.Generator, slow: dict[int, float], cells: int = 60,
         tau: float = 0.03) -> pd.DataFrame:
    """``cells`` cells of 3 rounds each ~2% apart; every cell of this run off by its own ``tau`` (the host between
    runs, beyond what the rounds show); cell i ``slow[i]`` times slower."""
    rows = []
    for c in range(cells):
        level = 1e-4 * (1 + c) * slow.get(c, 1.0) * math.exp(tau * rng.standard_normal())
        medians = [level * math.exp(0.02 * rng.standard_normal()) for _ in range(3)]
        rows.append({"run_id": run_id, "kernel": f"k{c}", "variant": "v", "backend": "numpy", "dtype": "float32",
                     "params": json.dumps({"n": 1000}), "mode": "eager", "cache": "hot", "status": "ok",
                     "env_id": "env", "round_medians_s": json.dumps(medians), "median_s": float(np.median(medians)),
                     "samples_s": json.dumps(medians), "noisy": False, "size": 1000, "size_label": "n=1000",
                     "timing_mode": "host"})
    return pd.DataFrame(rows)


def _runs(seed: int, k: int, slow: dict[int, float]) -> tuple[pd.DataFrame, list[str], list[str]]:
    rng = np.random.default_rng(seed)
    a = [f"A{i}" for i in range(k)]
    b = [f"B{i}" for i in range(k)]
    df = pd.concat([_run(r, rng, {}) for r in a] + [_run(r, rng, slow) for r in b], ignore_index=True)
    return df, a, b


def test_the_noise_between_one_sides_runs_is_measured():
    df, a, b = _runs(1, 4, {})
    table = compare_run_groups(df, a, b)
    assert table.attrs["run_noise_per_run"] == pytest.approx(0.03, rel=0.35)
    assert table.attrs["run_noise"] == pytest.approx(0.03 * math.sqrt(2), rel=0.35)


def test_more_runs_see_a_change_one_pair_cannot():
    df, a, b = _runs(2, 8, {0: 1.15, 1: 1.15, 2: 1.15, 3: 1.15})
    pair = compare_runs(df, a[0], b[0])
    groups = compare_run_groups(df, a, b)
    assert (pair["verdict"].iloc[:4] == "slower").sum() < 4  # one pair: the host's 3% a run hides 15%
    assert (groups["verdict"].iloc[:4] == "slower").all()
    assert groups["floor"].median() < pair["floor"].median() / 2  # about sqrt(8) narrower
    same = groups["verdict"].iloc[4:]
    assert same.isin(["faster", "slower"]).mean() <= 0.05


def test_identical_runs_are_rarely_called_changed():
    calls = 0
    for seed in range(10):
        df, a, b = _runs(100 + seed, 3, {})
        calls += compare_run_groups(df, a, b)["verdict"].isin(["faster", "slower"]).sum()
    assert calls <= 0.02 * 600


def test_a_side_level_never_claims_less_noise_than_its_runs_show():
    level, se = side_level([(0.0, 0.001), (0.2, 0.001)], tau=0.0)
    assert level == pytest.approx(0.1)
    assert se == pytest.approx(math.sqrt(np.var([0.0, 0.2], ddof=1) / 2))
    assert replicate_noise([{("c",): (0.0, 0.01)}]) is None


def test_an_undecided_cell_says_how_many_runs_would_settle_it():
    df, a, b = _runs(3, 2, {})
    table = compare_run_groups(df, a, b)
    advice = table.loc[table["verdict"] == "inconclusive", "settle"].dropna()
    assert len(advice) and advice.str.startswith("more runs of each side: about ").all()
    assert (table["basis"] == vd.RUNS).all() and (table["n_a"] == 2).all()


def test_a_run_on_both_sides_or_unknown_is_refused():
    df, a, b = _runs(4, 2, {})
    with pytest.raises(ValueError, match="both sides"):
        compare_run_groups(df, a, [a[0], b[0]])
    with pytest.raises(ValueError, match="unknown run"):
        compare_run_groups(df, a, ["nope"])


def test_cells_timed_in_other_modes_are_not_compared():
    df, a, b = _runs(5, 2, {})
    df.loc[(df["run_id"] == b[1]) & (df["kernel"] == "k0"), "timing_mode"] = "kernel"
    table = compare_run_groups(df, a, b)
    assert "k0" not in set(table["kernel"])
    assert "1 cell(s) not compared" in table.attrs["timing_modes"]


def test_more_rounds_advice_between_runs_settles_what_it_promises():
    """The rounds the advice names, measured with the same spread, give an interval that decides the effect."""
    rng = np.random.default_rng(6)
    a = np.exp(0.04 * rng.standard_normal(3))
    b = np.exp(0.04 * rng.standard_normal(3) + math.log(0.85))
    v = vd.unpaired_verdict(a, b, run_noise=0.005, median_errors=True)
    assert v.verdict == "inconclusive"
    need = int(v.settle.split("--rounds ")[1].split(")")[0])
    sigma = math.hypot(vd.round_sigma(np.log(a)), vd.round_sigma(np.log(b)))
    noise = math.hypot(vd.MEDIAN_EFFICIENCY * sigma / math.sqrt(need), 0.005)
    assert vd.K_BETWEEN * noise < abs(math.log(v.speedup))


# -- the command: workbench compare A1,A2 B1,B2 ------------------------------------------------------------

def _stored(tmp_path, names: list[str], seed: int = 7, slow: dict[int, float] | None = None):
    from workbench.report.sample_data import synthetic_environment
    from workbench.store.database import Store

    rng = np.random.default_rng(seed)
    store = Store(tmp_path / "results.sqlite")
    store.add_environment("env-demo", synthetic_environment())
    ids = {}
    for name in names:
        rid = store.new_run(name=name, env_id="env-demo", argv=["workbench", "bench", "--suite", "quick",
                                                                 "--name", name, "--store", str(store.path)])
        for row in _run(rid, rng, slow if name.startswith("B") and slow else {}, cells=30).to_dict("records"):
            store.record({**row, "env_id": "env-demo", "cell_key": f"{row['kernel']}|v"})
        store.set_run_status(rid, "finished", wall_s=3.0)
        ids[name] = rid
    return store, ids


def _compare(store, *args):
    from workbench.cli import main

    return main(["compare", *args, "--store", str(store.path)])


def test_compare_takes_several_runs_a_side_by_name_or_id(tmp_path, capsys):
    store, ids = _stored(tmp_path, ["A1", "A2", "B1", "B2"])
    assert _compare(store, "A1,A2", f"{ids['B1']},B2") == 0
    out = capsys.readouterr().out
    assert "between the runs of each side" in out and "each side is the mean of its runs' medians" in out
    assert "30 cells:" in out and "…" not in out


def test_compare_of_one_pair_prints_what_more_runs_would_see_and_the_commands(tmp_path, capsys):
    store, ids = _stored(tmp_path, ["A1", "B1"])
    assert _compare(store, "A1", "B1") == 0
    out = capsys.readouterr().out
    assert "what more runs would see: the median undecided cell could see ±" in out and "with 3, ±" in out
    assert f"workbench bench --suite quick --store {store.path} --name A1-2" in out
    assert f"workbench compare {ids['A1']},A1-2,A1-3 {ids['B1']},B1-2,B1-3 --store {store.path}" in out
    assert "…" not in out


@pytest.mark.parametrize(("a", "b", "message"), [
    ("A1,,A2", "B1", "holds an empty run name"),
    ("A1,A1", "B1", "names a run twice"),
    ("A1,nope", "B1", "unknown run id 'nope'"),
    ("A1,A2", "A2,B1", "on both sides"),
])
def test_bad_run_groups_are_refused_by_name(tmp_path, capsys, a, b, message):
    store, _ = _stored(tmp_path, ["A1", "A2", "B1"])
    assert _compare(store, a, b) == 2
    assert message in capsys.readouterr().err


def test_a_run_name_holding_a_comma_is_one_run(tmp_path, capsys):
    store, _ = _stored(tmp_path, ["A,1", "B1"])
    assert _compare(store, "A,1", "B1") == 0
    assert "speed-up of" in capsys.readouterr().out


def test_compare_names_what_differs_between_the_runs_environments(tmp_path, capsys):
    import copy

    from workbench.report.sample_data import synthetic_environment

    store, ids = _stored(tmp_path, ["A1", "B1"])
    upgraded = copy.deepcopy(synthetic_environment())
    upgraded.setdefault("packages", {})["numba"] = "99.1.0"
    store.add_environment("env-new", upgraded)
    import sqlite3

    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE results SET env_id = 'env-new' WHERE run_id = ?", (ids["B1"],))
    assert _compare(store, "A1", "B1") == 0
    out = capsys.readouterr().out
    old = synthetic_environment().get("packages", {}).get("numba", "-")
    assert f"note: one machine, other versions: numba {old} -> 99.1.0" in out
    moved = copy.deepcopy(upgraded)
    moved["host"]["cpu_model"] = "Another CPU"
    store.add_environment("env-other", moved)
    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE results SET env_id = 'env-other' WHERE run_id = ?", (ids["B1"],))
    assert _compare(store, "A1", "B1") == 0
    assert "note: the machines differ:" in capsys.readouterr().out


def test_cells_with_one_round_each_are_said_unjudged_not_unmatched(tmp_path, capsys):
    """Runs of one round: the cells match, but no run's median can be placed; the command says so (and why),
    never "(no matching cells)", and a --fail-on gate refuses with the same reason."""
    import sqlite3

    store, ids = _stored(tmp_path, ["A1", "A2", "B1", "B2"])
    with sqlite3.connect(store.path) as db:  # every row keeps one round median
        for run, key, rounds in db.execute("SELECT run_id, cell_key, round_medians_s FROM results").fetchall():
            db.execute("UPDATE results SET round_medians_s = ? WHERE run_id = ? AND cell_key = ?",
                       (json.dumps(json.loads(rounds)[:1]), run, key))
    assert _compare(store, "A1,A2", "B1,B2") == 0
    out = capsys.readouterr().out
    assert "(no matching cells)" not in out
    assert "30 cell(s) ok on both sides not judged" in out and "--rounds 3" in out
    assert _compare(store, "A1,A2", "B1,B2", "--fail-on", "slower") == 2
    assert "30 cell(s) ok on both sides not judged" in capsys.readouterr().err

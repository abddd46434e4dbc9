"""Between two runs, each cell counts as the standard error of its median, and the run-to-run noise is only what
the cells' own rounds do not explain (issue 36: the spread of one round counted on top of the scatter across cells
hid a 10% change in every cell of the quick suite; a round's speed probe divided into that round alone tripled
the median cell's error)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from workbench.judge import between_runs as br
from workbench.judge import verdicts as vd
from workbench.judge.compare import compare_runs


def _cells(rng, n: int, se: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
    errors = np.full(n, se)
    return rng.normal(0.0, np.hypot(errors, tau)), errors


def test_rounds_that_explain_the_scatter_leave_only_the_least_run_noise():
    rng = np.random.default_rng(1)
    ratios, errors = _cells(rng, 200, 0.03, 0.0)
    assert br.between_run_noise(ratios, errors) == br.RUN_NOISE_MIN


def test_the_excess_the_rounds_do_not_explain_is_measured():
    rng = np.random.default_rng(2)
    ratios, errors = _cells(rng, 400, 0.01, 0.04)
    assert br.between_run_noise(ratios, errors) == pytest.approx(0.04, rel=0.2)


def test_a_few_changed_cells_do_not_widen_every_other_one():
    rng = np.random.default_rng(3)
    ratios, errors = _cells(rng, 100, 0.01, 0.02)
    quiet = br.between_run_noise(ratios, errors)
    ratios[:5] += math.log(1.3)  # five cells really changed
    assert br.between_run_noise(ratios, errors) < quiet * 1.25


def test_too_few_cells_cannot_show_the_run_noise():
    assert br.between_run_noise([0.01, 0.02], [0.01, 0.01]) == vd.STREAM_NOISE


def test_the_error_of_a_median_shrinks_with_its_rounds():
    x = np.log([1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.02, 0.98, 1.01])
    assert vd.median_error(x[:3]) > vd.median_error(x)
    assert vd.median_error(x[:3]) == pytest.approx(vd.round_sigma(x[:3]) * vd.MEDIAN_EFFICIENCY / math.sqrt(3))
    assert math.isnan(vd.median_error(x[:1]))


def _run(run_id: str, slow: dict[int, float], cells: int, seed: int, first_probe: float = 1.0) -> pd.DataFrame:
    """``cells`` cells, 3 rounds each ~3% apart, each cell ~1% off between runs beyond its rounds; cell i
    ``slow[i]`` times slower; every round's speed probe at 20 us, the first one ``first_probe`` times it."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(cells):
        base = 1e-4 * (1 + c) * slow.get(c, 1.0) * (1 + 0.01 * rng.standard_normal())
        medians = [base * (1 + 0.03 * rng.standard_normal()) for _ in range(3)]
        probes = [2e-5 * first_probe, 2e-5, 2e-5]
        rows.append({"run_id": run_id, "kernel": f"k{c}", "variant": "v", "backend": "numpy", "dtype": "float32",
                     "params": json.dumps({"n": 1000}), "mode": "eager", "cache": "hot", "status": "ok",
                     "env_id": "env", "round_medians_s": json.dumps(medians), "round_probes_s": json.dumps(probes),
                     "median_s": float(np.median(medians)), "samples_s": json.dumps(medians), "noisy": False,
                     "size": 1000, "size_label": "n=1000"})
    return pd.DataFrame(rows)


def test_a_fifteen_percent_change_is_seen_beside_rounds_three_percent_apart():
    """Counted as one round's spread on top of the scatter across cells, the floor was about ±17% here."""
    df = pd.concat([_run("A", {}, 60, 0), _run("B", {0: 1.15, 1: 1.15, 2: 1.15}, 60, 1)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert (table["verdict"].iloc[:3] == "slower").all(), table.iloc[:3][["speedup", "floor", "verdict"]]
    assert (table["verdict"].iloc[3:].isin(["faster", "slower"])).mean() <= 0.05
    assert table.attrs["run_noise"] < 0.03 and table["floor"].iloc[3:].median() < 0.13


def test_one_rounds_speed_probe_does_not_move_that_round_of_every_cell():
    """A first-round probe 5% faster than the others, the cells not: judged round by round, every cell's first
    round read 5% slower and its error tripled; the sides' median probes carry the runs' drift instead."""
    steady = compare_runs(pd.concat([_run("A", {}, 40, 0), _run("B", {}, 40, 1)], ignore_index=True), "A", "B")
    odd = compare_runs(pd.concat([_run("A", {}, 40, 0, first_probe=0.95), _run("B", {}, 40, 1)], ignore_index=True),
                       "A", "B")
    assert odd["noise"].median() == pytest.approx(steady["noise"].median(), rel=0.1)


def test_cells_on_other_thread_pools_are_the_change_not_the_noise():
    """Tutorial 07: run B pins numba to one thread. Measured around all six cells' common shift, numba's 0.57x
    made every verdict "disturbed"; measured on the cells whose settings stayed, numpy reads same, numba slower."""
    a, b = _run("A", {}, 10, 0), _run("B", {c: 1.75 for c in range(5, 10)}, 10, 1)
    for df, numba_threads in ((a, "numba 2, blas:openblas 2"), (b, "numba 1, blas:openblas 2")):
        df["threads"] = ["blas:openblas 2"] * 5 + [numba_threads] * 5
        df["backend"] = ["numpy"] * 5 + ["numba"] * 5
    table = compare_runs(pd.concat([a, b], ignore_index=True), "A", "B")
    assert table.attrs["noise_cells"] == (5, 5)
    assert table.attrs["run_noise"] < 0.05
    assert (table["verdict"].iloc[5:] == "slower").all(), table[["speedup", "floor", "verdict"]]
    assert not table["verdict"].iloc[:5].isin(["faster", "slower"]).any()
    # the same rows without the recorded settings: the change is in the noise, and nothing can be told
    blind = compare_runs(pd.concat([a, b], ignore_index=True).drop(columns="threads"), "A", "B")
    assert blind.attrs["noise_cells"] == (10, 0) and blind.attrs["run_noise"] > 0.15


def test_a_run_in_one_process_records_every_pool_on_every_row():
    """In one process numpy's rows record numba's pool too: numba's pool is numba's setting, not numpy's."""
    a, b = _run("A", {}, 10, 0), _run("B", {c: 1.75 for c in range(5, 10)}, 10, 1)
    a["backend"], b["backend"] = ["numpy"] * 5 + ["numba"] * 5, ["numpy"] * 5 + ["numba"] * 5
    a["threads"], b["threads"] = "numba 2, blas:openblas 2; wait", "numba 1, blas:openblas 2; wait"
    table = compare_runs(pd.concat([a, b], ignore_index=True), "A", "B")
    assert table.attrs["noise_cells"] == (5, 5)
    # a pool one row does not name had not started yet (OpenMP before numba's first parallel call): no change
    a.loc[0, "threads"] = "numba 2, blas:openblas 2, openmp:openmp 2; wait"
    assert compare_runs(pd.concat([a, b], ignore_index=True), "A", "B").attrs["noise_cells"] == (5, 5)
    assert br.cell_pools("numba 2, blas:openblas 2, torch 4; w", "torch-cpu") == {"blas:openblas": "2", "torch": "4"}


def test_a_numpy_cell_does_not_count_openmps_pool_as_its_own():
    """numba set to one thread in one process moves OpenMP's pool; numpy never runs on it, so its cell stays in
    the noise's calibration (tutorial 07 left one out and every verdict fell back to an assumed noise)."""
    assert "openmp:openmp" not in br.cell_pools("numba 1, blas:openblas 1, openmp:openmp 1; w", "numpy")
    assert br.cell_pools("numba 1, blas:openblas 1, openmp:openmp 1; w", "numba")["openmp:openmp"] == "1"
    assert br.cell_pools("torch 2, openmp:libgomp 2; w", "torch-cpu")["openmp:libgomp"] == "2"
    assert "openmp:libgomp" not in br.cell_pools("torch 2, openmp:libgomp 2; w", "opencl-0")


def test_only_the_pools_decide_which_cells_measure_the_noise():
    """07, one core busy: "the 6 cells whose rows record other thread pools are left out" where only numba's 5
    differed in pools. A row whose rounds saw two thread texts joins them with " | "; read as one text, the second
    text's pools fell after the first ";" and a numpy cell read as changed. Nor does the part after ";" (OpenMP's
    wait, the allocator) decide: it is no pool."""
    a, b = _run("A", {}, 10, 0), _run("B", {c: 1.75 for c in range(5, 10)}, 10, 1)
    a["backend"], b["backend"] = ["numpy"] * 5 + ["numba"] * 5, ["numpy"] * 5 + ["numba"] * 5
    a["threads"] = "numba 2, blas:openblas 2, openmp:openmp 2; wait; malloc: default"
    b["threads"] = "numba 1, blas:openblas 2, openmp:openmp 1; wait; malloc: default"
    a.loc[0, "threads"] = ("numba 2, blas:openblas 2; wait; malloc: default | "
                           "numba 2, blas:openblas 2, openmp:openmp 2; wait; malloc: default")
    a.loc[1, "threads"] = "numba 2, blas:openblas 2, openmp:openmp 2; wait; malloc: heap kept (set by workbench)"
    assert compare_runs(pd.concat([a, b], ignore_index=True), "A", "B").attrs["noise_cells"] == (5, 5)
    assert br.row_pools(a.loc[0, "threads"], "numpy") == {"blas:openblas": {"2"}}
    # a BLAS pool that did change in some round of a numpy row is still a change
    b.loc[2, "threads"] = "numba 1, blas:openblas 1; wait | numba 1, blas:openblas 2; wait"
    assert compare_runs(pd.concat([a, b], ignore_index=True), "A", "B").attrs["noise_cells"] == (4, 6)

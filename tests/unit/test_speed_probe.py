"""The machine's speed probe: taken before every round, kept per round on the row, and used by ``compare`` to
judge two runs of one machine at one speed (issue 36)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.judge.compare import compare_runs
from workbench.measure.rounds import merge_rounds
from workbench.measure.speed_probe import speed_probe_s


def test_the_probe_times_a_call_in_microseconds_and_repeats():
    a, b = speed_probe_s(0.02), speed_probe_s(0.02)
    assert 1e-7 < a < 1e-3 and 1e-7 < b < 1e-3
    assert 0.5 < a / b < 2.0  # a loose bound: this only checks it measures the same thing (timings are noisy)


def _run(run_id: str, env: str, slow: float, probe: float, cells: int = 12, seed: int = 0,
         probe_scatter: float = 0.002) -> pd.DataFrame:
    """``cells`` cells of one run: 4 round medians each near ``slow`` x the cell's time, probes at ``probe``."""
    rng = np.random.default_rng(seed)
    round_probes = [probe * (1 + probe_scatter * rng.standard_normal()) for _ in range(4)]  # one per round
    rows = []
    for c in range(cells):
        base = 1e-4 * (1 + c)
        medians = [base * slow * (1 + 0.005 * rng.standard_normal()) for _ in range(4)]
        probes = list(round_probes)
        rows.append({"run_id": run_id, "kernel": f"k{c}", "variant": "v", "backend": "numpy", "dtype": "float32",
                     "params": json.dumps({"n": 1000}), "mode": "eager", "cache": "hot", "status": "ok",
                     "env_id": env, "round_medians_s": json.dumps(medians), "round_probes_s": json.dumps(probes),
                     "median_s": float(np.median(medians)), "samples_s": json.dumps(medians), "noisy": False,
                     "size": 1000, "size_label": "n=1000"})
    return pd.DataFrame(rows)


def test_a_host_that_drifted_is_not_read_as_every_kernel():
    df = pd.concat([_run("A", "env", 1.00, 2e-5), _run("B", "env", 1.06, 2.12e-5, seed=1)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert table.attrs["speed_drift"] == pytest.approx(1.06, rel=0.01)
    assert not (table["verdict"] == "slower").any(), table["verdict"].value_counts()


def test_a_probe_drift_within_the_probes_own_scatter_is_not_applied():
    """Probes that scatter 4% round to round cannot tell a 6% drift: dividing by them made unchanged cells
    "faster" (a power pair, 2026-12-07); such a drift is reported, and cells are judged as measured."""
    df = pd.concat([_run("A", "env", 1.00, 2e-5, probe_scatter=0.04),
                    _run("B", "env", 1.00, 2.12e-5, seed=1, probe_scatter=0.04)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert table.attrs["speed_scatter"] is not None and table.attrs["speed_drift"] is not None
    assert set(table["verdict"]) <= {"same", "inconclusive"}, table["verdict"].value_counts()
    assert table["speedup"].between(0.98, 1.02).all()


def test_a_real_slow_down_is_still_seen_at_one_speed():
    df = pd.concat([_run("A", "env", 1.00, 2e-5), _run("B", "env", 1.15, 2e-5, seed=1)], ignore_index=True)
    assert (compare_runs(df, "A", "B")["verdict"] == "slower").all()


def test_runs_of_two_machines_are_compared_as_measured():
    df = pd.concat([_run("A", "env-1", 1.00, 2e-5), _run("B", "env-2", 1.15, 2.3e-5, seed=1)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert table.attrs["speed_drift"] is None
    assert (table["verdict"] == "slower").all()  # another machine's probe does not excuse a slower kernel


def test_rounds_keep_their_probes_beside_their_medians():
    rows = [{"status": "ok", "samples_s": "[1.0, 1.0, 1.0]", "median_s": m, "speed_probe_s": p}
            for m, p in ((1.0, 2e-5), (1.1, 2.2e-5), (1.0, 2e-5))]
    row = None
    for r in rows:
        row = merge_rounds(row, dict(r))
    assert json.loads(row["round_probes_s"]) == [2e-5, 2.2e-5, 2e-5]
    assert row["speed_probe_s"] == 2e-5
    mixed = merge_rounds(merge_rounds(None, dict(rows[0])), {**rows[1], "speed_probe_s": None})
    assert mixed["round_probes_s"] is None  # a round without a probe: none kept, never misaligned


def test_compare_says_when_the_runs_ran_under_other_conditions():
    a, b = _run("A", "env", 1.0, 2e-5), _run("B", "env", 1.0, 2e-5, seed=1)
    a["load_avg_1m"], b["load_avg_1m"] = 2.0, 9.0
    a["other_cpu_share"], b["other_cpu_share"] = 0.01, 0.45
    a["threads"], b["threads"] = "numba 2", "numba 1"
    said = " | ".join(compare_runs(pd.concat([a, b], ignore_index=True), "A", "B").attrs["conditions"])
    assert "2.0 in the first run, 9.0 in the second" in said and "1% of the CPU in the first run and 45%" in said
    assert "45% in the second (median over the rows)" in said   # a median, said so beside 'up to' maxima (07)
    assert "'numba 2' against 'numba 1'" in said and "different machines" not in said
    b["env_id"], b["load_avg_1m"], b["other_cpu_share"], b["threads"] = "env-2", 2.2, 0.02, "numba 2"
    said = compare_runs(pd.concat([a, b], ignore_index=True), "A", "B").attrs["conditions"]
    assert len(said) == 1 and "different machines" in said[0]


# -- the host's memory weather --------------------------------------------------------------------------------

def test_the_bandwidth_probe_reads_gigabytes_a_second_from_an_array_past_the_cache():
    from workbench.measure.speed_probe import bandwidth_probe_gbs
    gbs = bandwidth_probe_gbs(1 << 20, copies=2)  # no LLC this small: the 64 MiB floor
    assert 0.1 < gbs < 10_000


def test_a_round_taken_while_the_hosts_bandwidth_was_down_is_named_with_its_figure():
    rows = [{"status": "ok", "samples_s": "[1.0, 1.0]", "median_s": m, "bandwidth_probe_gbs": g}
            for m, g in ((1.0, 20.0), (1.4, 12.0), (1.0, 19.5))]
    row = None
    for r in rows:
        row = merge_rounds(row, dict(r))
    assert json.loads(row["round_bandwidth_gbs"]) == [20.0, 12.0, 19.5]
    assert row["bandwidth_probe_gbs"] == 19.5
    assert ("memory bandwidth was down in round 2 (12.0 of 20.0 GB/s; the cell 1.40x its other rounds' time)"
            in row["noise_note"] and row["noisy"])
    felt = None  # the same dip in a round the cell ran as fast as in the others: the probe's, not the cell's
    for r in rows:
        felt = merge_rounds(felt, {**r, "median_s": 1.0})
    assert "bandwidth" not in (felt["noise_note"] or "") and not felt["noisy"]
    steady = None
    for r in rows:
        steady = merge_rounds(steady, {**r, "bandwidth_probe_gbs": 20.0})
    assert "bandwidth" not in (steady["noise_note"] or "")


def _dram_run(run_id: str, slow: float, gbs: float, seed: int) -> pd.DataFrame:
    df = _run(run_id, "env", slow, 2e-5, seed=seed)
    df["bound"] = "memory-bound"
    rng = np.random.default_rng(seed + 10)
    df["round_bandwidth_gbs"] = [json.dumps([gbs * (1 + 0.003 * rng.standard_normal()) for _ in range(4)])
                                 for _ in range(len(df))]
    return df


def test_memory_bound_cells_past_the_cache_are_judged_at_one_bandwidth():
    # the host's bus was 12% slower in B and every DRAM-bound cell with it; the speed probe saw nothing
    df = pd.concat([_dram_run("A", 1.00, 20.0, 0), _dram_run("B", 1.12, 20.0 / 1.12, 1)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert table.attrs["bandwidth_drift"] == pytest.approx(1.12, rel=0.01)
    assert not (table["verdict"] == "slower").any(), table["verdict"].value_counts()
    # the same slow-down with a steady bus is the kernel's, and is seen
    df = pd.concat([_dram_run("A", 1.00, 20.0, 0), _dram_run("B", 1.15, 20.0, 1)], ignore_index=True)
    assert (compare_runs(df, "A", "B")["verdict"] == "slower").all()


def test_only_a_round_with_a_cell_past_the_cache_gets_a_bandwidth_probe():
    from workbench.sweep.plan import SweepPlan
    from workbench.sweep.spec import SweepSpec
    plan = SweepPlan(SweepSpec(kernels=["saxpy"], backends=["numpy"], sizes=[4099, 1 << 22], rounds=3))
    small = [c for c in plan.cells if c.params_dict["n"] == 4099]
    large = [c for c in plan.cells if c.params_dict["n"] == 1 << 22]  # saxpy: 12 bytes an element, 48 MiB
    assert not plan.past_the_cache(small, 32 << 20)
    assert plan.past_the_cache(large, 32 << 20)
    assert not plan.past_the_cache(large, 480 << 20)  # the LLC is the machine's: 480 MiB holds it
    plan.past_the_cache(plan.cells, 32 << 20)
    plan.bandwidth_probe_gbs = 20.0  # a round's probe reaches only the rows it bears on (past the cache)
    from workbench.measure.cell_facts import new_result
    for cell, expected in ((small[0], None), (large[0], 20.0)):
        row = plan.merged(cell, new_result(cell), "run", "env")
        assert row.get("bandwidth_probe_gbs") == expected, (cell.params_dict, row.get("bandwidth_probe_gbs"))


def _cpu_run(run_id: str, slow: float, host_probe: float, seed: int, sweep_probe: float = 2e-5,
             cells: int = 12) -> pd.DataFrame:
    """A run whose CPU cells' workers probed the host around each round (``round_host_probes_s``), the sweep's own
    probe reading ``sweep_probe`` throughout."""
    df = _run(run_id, "env", slow, sweep_probe, cells=cells, seed=seed)
    rng = np.random.default_rng(seed + 100)
    df["round_host_probes_s"] = [json.dumps([host_probe * (1 + 0.02 * rng.standard_normal()) for _ in range(4)])
                                 for _ in range(len(df))]
    return df


def test_a_run_taken_while_the_host_ran_slow_is_judged_at_the_host_speed():
    """An idle pair (2026-12-07): every cell 14% slower in run B, the workers' host probes 14.7% slower, the
    sweep's probe (another process) 1.8% faster: the host's phase, not the kernels."""
    df = pd.concat([_cpu_run("A", 1.00, 2.2e-6, 0), _cpu_run("B", 1.14, 2.2e-6 * 1.14, 1, sweep_probe=1.96e-5)],
                   ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert table.attrs["host_drift"] == pytest.approx(1.14, rel=0.02)
    assert table.attrs["host_scatter"] is None  # 48 rounds a run: the drift is far beyond the probes' scatter
    assert not (table["verdict"] == "slower").any(), table["verdict"].value_counts()


def test_a_real_slow_down_with_the_host_at_one_speed_is_seen():
    df = pd.concat([_cpu_run("A", 1.00, 2.2e-6, 0), _cpu_run("B", 1.15, 2.2e-6, 1)], ignore_index=True)
    table = compare_runs(df, "A", "B")
    assert (table["verdict"] == "slower").all(), table["verdict"].value_counts()


def test_host_probes_are_kept_per_round_and_summarised_by_their_median():
    row = None
    for probe in (2.0e-6, 2.6e-6, 2.2e-6):
        row = merge_rounds(row, {"status": "ok", "samples_s": json.dumps([1e-4, 1.1e-4]), "median_s": 1.05e-4,
                                 "host_slowdown": probe / 2e-6, "host_probe_s": probe})
    assert json.loads(row["round_host_probes_s"]) == pytest.approx([2.0e-6, 2.6e-6, 2.2e-6])
    assert row["host_probe_s"] == pytest.approx(2.2e-6)


def test_cells_without_host_probes_on_one_side_fall_back_to_the_sweep_probe():
    a = _cpu_run("A", 1.00, 2.2e-6, 0)
    b = _run("B", "env", 1.06, 2.12e-5, seed=1)  # an older run: no host probes
    table = compare_runs(pd.concat([a, b], ignore_index=True), "A", "B")
    assert table.attrs["host_drift"] is None
    assert table.attrs["speed_drift"] == pytest.approx(1.06, rel=0.01)

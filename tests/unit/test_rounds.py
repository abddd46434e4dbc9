"""Rounds: per-round budgets, seeded orders, merging a cell's rounds into one row, the noise flag."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.judge import verdicts
from workbench.measure.rounds import (
    BUSY_CPU_SHARE,
    finish_single_round,
    is_final,
    merge_conditions,
    merge_rounds,
    noise_fields,
    round_config,
    round_order,
    rounds_done,
)
from workbench.measure.timer import TimingConfig


def test_round_config_shares_the_budget_with_a_per_round_minimum():
    cfg = TimingConfig(budget_s=0.3, min_samples=10, max_samples=2000)
    assert round_config(cfg, 1) is cfg
    r3 = round_config(cfg, 3)
    assert r3.budget_s == pytest.approx(0.1) and r3.min_samples == 4 and r3.max_samples == 667
    assert r3.warmup_s == cfg.warmup_s and round_config(cfg, 3, later=True).warmup_s == pytest.approx(cfg.warmup_s / 3)
    r5 = round_config(TimingConfig(budget_s=0.04, min_samples=5, max_samples=200), 5)
    assert r5.min_samples == 3 and r5.max_samples == 40  # never fewer than 3 samples a round
    assert round_config(TimingConfig(min_samples=1, max_samples=1), 4).min_samples == 1  # unless asked for


def test_round_order_shuffles_groups_and_within_groups_reproducibly():
    items = [(g, i) for g in range(6) for i in range(3)]
    orders = [round_order(items, lambda x: x[0], seed=1, round_index=r) for r in range(1, 5)]
    assert orders == [round_order(items, lambda x: x[0], seed=1, round_index=r) for r in range(1, 5)]
    assert all(sorted(o) == items for o in orders)
    assert len({tuple(o) for o in orders}) == 4
    assert round_order(items, lambda x: x[0], seed=2, round_index=1) != orders[0]
    for o in orders:  # each group stays together
        groups = [g for g, _ in o]
        assert all(len(set(groups[i:i + 3])) == 1 for i in range(0, 18, 3))


def _row(medians_per_round, **kw):
    samples = [m * f for m in medians_per_round for f in (0.99, 1.0, 1.01)]
    median = float(np.median(samples))
    row = {"status": "ok", "samples_s": json.dumps(samples), "host_samples_s": json.dumps(samples),
           "median_s": median, "n_samples": len(samples), "bytes": 8e6, "flops": 1e6,
           "gbps": 8e6 / median / 1e9, "gflops": 1e6 / median / 1e9, "pct_peak_bw": 8e6 / median / 1e9 / 10 * 100,
           "pct_published": None, "stopped_by": "spread", "wall_s": 0.1, "warmup_calls": 3, "max_error": 1e-7,
           "tolerance": 1e-5, "first_call_s": 0.5, "peak_mem_bytes": 1000, "calls_per_sample": 2,
           "load_avg_1m": 0.5, "other_cpu_share": 0.05, "other_cpu_s": 0.01, "steal_s": 0.0,
           "cpu_freq_mhz": 3000.0, "gpu_clock_mhz": None, "gpu_temp_c": None, "gpu_throttle": None}
    row.update(kw)
    return finish_single_round(row)


def test_merged_row_pools_samples_and_heads_with_the_median_of_round_medians():
    row = _row([1e-3])
    assert row["rounds"] == 1 and json.loads(row["round_medians_s"]) == [1e-3]
    assert row["noise"] == pytest.approx(verdicts.rel_spread(json.loads(row["samples_s"])))
    later = dict(first_call_s=None, peak_mem_bytes=None, load_avg_1m=2.5, other_cpu_share=0.4, other_cpu_s=0.2,
                 cpu_freq_mhz=2000.0, stopped_by="budget", max_error=2e-7, gpu_throttle="")
    for m in (1.5e-3, 1.1e-3):
        row = merge_rounds(row, _row([m], **later))
    medians = json.loads(row["round_medians_s"])
    assert medians == pytest.approx([1e-3, 1.5e-3, 1.1e-3]) and row["rounds"] == 3
    assert row["median_s"] == pytest.approx(1.1e-3)
    samples = json.loads(row["samples_s"])
    assert len(samples) == row["n_samples"] == 9 and row["min_s"] == pytest.approx(min(samples))
    from workbench.judge.stats import round_weighted_quartiles
    assert json.loads(row["round_sizes"]) == [3, 3, 3]  # quartiles weigh each round the same (one rule for all)
    assert (row["q1_s"], row["q3_s"]) == pytest.approx(round_weighted_quartiles(samples, [3, 3, 3]))
    assert row["q1_s"] <= row["median_s"] <= row["q3_s"]
    assert row["gbps"] == pytest.approx(8e6 / 1.1e-3 / 1e9) and row["gflops"] == pytest.approx(1e6 / 1.1e-3 / 1e9)
    assert row["pct_peak_bw"] == pytest.approx(100 * row["gbps"] / 10)
    assert row["first_call_s"] == 0.5 and row["peak_mem_bytes"] == 1000  # from the first round
    assert row["wall_s"] == pytest.approx(0.3) and row["warmup_calls"] == 9 and row["max_error"] == 2e-7
    assert row["stopped_by"] == "budget"
    # the worst conditions: max load and share, summed CPU seconds, the lowest clock
    assert (row["load_avg_1m"], row["other_cpu_share"], row["cpu_freq_mhz"]) == (2.5, 0.4, 2000.0)
    assert row["other_cpu_s"] == pytest.approx(0.41) and row["gpu_throttle"] == ""
    assert row["noise"] == pytest.approx(verdicts.rel_spread(medians))
    assert row["noisy"] is True and "across 3 rounds" in row["noise_note"]
    assert "other processes used 40% of the CPU" in row["noise_note"]


def test_a_failing_round_ends_the_cell_and_keeps_the_samples():
    row = _row([1e-3])
    bad = {"status": "incorrect", "message": "verification after timing failed: x", "samples_s": json.dumps([]),
           "max_error": 1.0, "tolerance": 1e-5, "wall_s": 0.1}
    merged = merge_rounds(row, bad)
    assert merged["status"] == "incorrect" and "after timing" in merged["message"]
    assert merged["rounds"] == 1 and merged["n_samples"] == 3 and merged["max_error"] == 1.0
    assert is_final(merged) and not is_final(row) and not is_final(None)
    first = merge_rounds(None, {"status": "error", "message": "boom"})
    assert first["status"] == "error" and first["noise"] is None and rounds_done(first) == 1


def test_an_implausible_round_is_pooled_and_marks_the_cell_whatever_the_other_rounds_read():
    """A round timed beyond the top roof counts as a round (the sweep sees all its rounds, the run ends
    finished) and the cell stays implausible with that round's message: a later ok round does not clear it."""
    why = "implausible: 412 GB/s is above the top roof (L1 140 GB/s)"
    for order in (["ok", "implausible", "ok"], ["implausible", "ok", "ok"], ["ok", "ok", "implausible"]):
        rows = [_row([m], status=s, message=why if s == "implausible" else None)
                for m, s in zip([1e-3, 2e-3, 3e-3], order, strict=True)]
        merged = rows[0]
        for r in rows[1:]:
            merged = merge_rounds(merged, r)
        assert merged["status"] == "implausible" and merged["message"] == why, order
        assert merged["rounds"] == 3 and json.loads(merged["round_medians_s"]) == pytest.approx([1e-3, 2e-3, 3e-3])
        assert merged["median_s"] == pytest.approx(2e-3) and merged["n_samples"] == 9
        assert not is_final(merged) and rounds_done(merged) == 3
    ok = merge_rounds(_row([1e-3], message=None), _row([2e-3], message=None))
    assert ok["status"] == "ok"


def test_rounds_done_counts_rows_from_before_rounds_as_one():
    assert rounds_done(None) == 0 and rounds_done({"status": "ok"}) == 1 and rounds_done({"rounds": 4}) == 4


def test_noise_flag_from_spread_or_a_busy_machine():
    quiet = {"round_medians_s": json.dumps([1.0, 1.01, 0.99]), "other_cpu_share": 0.02}
    assert noise_fields(quiet) == {"noise": pytest.approx(verdicts.rel_spread([1.0, 1.01, 0.99])), "noisy": False,
                                   "noise_note": ""}
    spread = noise_fields({"round_medians_s": json.dumps([1.0, 1.4, 0.8])})
    assert spread["noisy"] and spread["noise_note"].startswith("spread") and "across 3 rounds" in spread["noise_note"]
    busy = noise_fields({**quiet, "other_cpu_share": BUSY_CPU_SHARE + 0.1})
    assert busy["noisy"] and "other processes used" in busy["noise_note"]
    one = noise_fields({"samples_s": json.dumps([1.0, 1.3, 0.7, 1.0])})
    assert one["noisy"] and "within one stream" in one["noise_note"]
    assert noise_fields({}) == {"noise": None, "noisy": None, "noise_note": None}


def test_conditions_merge_keeps_none_when_nothing_was_read():
    assert merge_conditions({}, {}) == {k: None for k in merge_conditions({}, {})}
    assert merge_conditions({"gpu_throttle": "sw thermal"}, {"gpu_throttle": "hw slowdown, sw thermal"}
                            )["gpu_throttle"] == "sw thermal, hw slowdown"


def test_a_rounds_quartiles_weigh_every_round_the_same_so_the_headline_median_lies_inside():
    """A disturbed round that sampled longer (precision sampling) no longer drags the quartiles to itself: the
    headline (median of round medians) read 935 us with quartiles 962 us - 1.02 ms before (issue 39)."""
    import json as _json

    from workbench.measure.rounds import merge_rounds
    quiet = [0.93e-3 + 1e-6 * i for i in range(5)]
    noisy = [1.0e-3 + 2e-6 * i for i in range(30)]
    row = None
    for samples in (quiet, noisy, quiet):
        row = merge_rounds(row, {"status": "ok", "samples_s": _json.dumps(samples),
                                 "median_s": sorted(samples)[len(samples) // 2]})
    assert _json.loads(row["round_sizes"]) == [5, 30, 5]
    assert row["q1_s"] <= row["median_s"] <= row["q3_s"], (row["q1_s"], row["median_s"], row["q3_s"])
    pooled = sorted(quiet + noisy + quiet)
    assert pooled[len(pooled) // 4] > row["median_s"]  # what pooling gave: a first quartile above the median

"""The host's speed around a CPU cell's timing (:mod:`workbench.measure.host_settle`): waited for before it, read
after it, and a round the slow host stretched set aside from the headline, named, and measured again."""

from __future__ import annotations

import json

import pytest

from workbench.judge.dips import host_slow_rounds, rounds_at_speed
from workbench.measure import host_settle
from workbench.measure.rounds import median_above_fastest, merge_rounds


class _Scripted:
    """A probe whose windows read the given multiples of 1 us (then 1 us): a host slow for a while."""

    def __init__(self, readings: list[float]) -> None:
        self.readings, self.best, self.windows = list(readings), 1e-6, 0

    def window(self, seconds: float = host_settle.WINDOW_S) -> float:
        self.windows += 1
        return 1e-6 * (self.readings.pop(0) if self.readings else 1.0)


@pytest.fixture
def scripted(monkeypatch):
    def make(readings: list[float]) -> _Scripted:
        probe = _Scripted(readings)
        monkeypatch.setattr(host_settle, "_the_probe", lambda: probe)
        return probe
    return make


def test_a_cell_waits_while_the_host_runs_slow_and_starts_once_it_is_at_speed(scripted):
    probe = scripted([1.35, 1.3, 1.02])
    visit = host_settle.settle()
    assert probe.windows == 3 and visit.before == pytest.approx(1.02)
    probe.readings = [1.3]
    assert visit.end().after == pytest.approx(1.3) and visit.slowdown == pytest.approx(1.3)


def test_the_wait_is_bounded_and_the_slowdown_it_ended_at_is_kept(scripted):
    scripted([1.4] * 10_000)
    visit = host_settle.settle(cap_s=0.0)
    assert visit.before == pytest.approx(1.4) and visit.settle_s < 0.5


def test_the_wait_can_be_turned_off_and_the_reading_is_still_taken(scripted, monkeypatch):
    monkeypatch.setenv(host_settle.SETTLE_ENV, "0")
    probe = scripted([1.4, 1.4, 1.0])
    visit = host_settle.settle()
    assert probe.windows == 1 and visit.before == pytest.approx(1.4)


def test_the_real_probe_reads_at_speed_against_its_own_best():
    visit = host_settle.settle(cap_s=0.05)
    assert visit.before >= 1.0 and visit.end().after >= 1.0


def test_a_round_the_slow_host_stretched_is_set_aside_where_another_was_at_speed():
    medians, slowdowns = [1.0, 1.32, 1.02], [1.01, 1.3, 1.0]
    assert host_slow_rounds(medians, slowdowns) == {1: (1.3, pytest.approx(1.32 / 1.01))}
    assert rounds_at_speed(medians, slowdowns) == [1.0, 1.02]
    # the host slow but the cell not slower there: nothing to set aside
    assert host_slow_rounds([1.0, 1.01, 1.02], slowdowns) == {}
    # no round at speed: nothing to set them against, every round kept
    assert rounds_at_speed([1.3, 1.0, 1.2], [1.2, 1.3, 1.25]) == [1.3, 1.0, 1.2]


def _merged(medians: list[float], slowdowns: list[float]) -> dict:
    row = None
    for m, s in zip(medians, slowdowns, strict=True):
        row = merge_rounds(row, {"status": "ok", "samples_s": json.dumps([m] * 3), "median_s": m,
                                 "host_slowdown": s, "host_settle_s": 0.01})
    return row


def test_a_merged_row_takes_its_headline_and_spread_from_its_rounds_at_speed_and_says_so():
    row = _merged([1.0, 1.4, 1.02], [1.0, 1.35, 1.02])
    assert row["median_s"] == pytest.approx(1.01)  # the median of 1.0 and 1.02, never 1.02 from all three
    assert json.loads(row["round_host_slowdowns"]) == [1.0, 1.35, 1.02] and row["host_slowdown"] == 1.35
    assert row["host_settle_s"] == pytest.approx(0.03)
    assert "round 2 set aside: taken while the host ran slow (its probe 1.35x its best" in row["noise_note"]
    assert not row["noisy"]  # the rounds the headline rests on agree
    plain = _merged([1.0, 1.4, 1.02], [1.0, 1.0, 1.0])  # the same times with the host at speed: all count
    assert plain["median_s"] == pytest.approx(1.02) and "set aside" not in (plain["noise_note"] or "")


def test_a_cell_left_with_too_few_rounds_at_speed_is_measured_again():
    assert median_above_fastest(_merged([1.0, 1.4, 1.41], [1.0, 1.35, 1.3]))
    assert median_above_fastest(_merged([1.0, 1.4, 1.02], [1.0, 1.35, 1.02]))  # 2 at speed: a verdict needs 3
    assert not median_above_fastest(_merged([1.0, 1.4, 1.02, 1.01], [1.0, 1.35, 1.02, 1.0]))
    assert not median_above_fastest(_merged([1.0, 1.02, 1.01], [1.0, 1.35, 1.0]))  # the cell did not feel it


def test_compare_between_runs_leaves_out_the_rounds_the_headline_left_out():
    import numpy as np
    import pandas as pd

    from workbench.judge.between_runs import at_speed, kept_rounds
    r = pd.Series({"round_medians_s_a": json.dumps([1.0, 1.4, 1.02, 1.01]),
                   "round_host_slowdowns_a": json.dumps([1.0, 1.35, 1.02, 1.0]),
                   "round_medians_s_b": json.dumps([1.0, 1.4, 1.02]),
                   "round_host_slowdowns_b": json.dumps([1.0, 1.35, 1.02])})
    masks = (at_speed(r, "a"), at_speed(r, "b"))
    assert masks[0].tolist() == [True, False, True, True] and masks[1] is None  # b: 2 left, judged as measured
    raw = ((np.array([1.0, 1.4, 1.02, 1.01]), True), (np.array([1.0, 1.4, 1.02]), True))
    both, probes = kept_rounds(raw, masks, (np.array([5.0, 6.0, 5.0, 5.0]), np.array([5.0, 6.0, 5.0])))
    assert both[0][0].tolist() == [1.0, 1.02, 1.01] and both[1][0].tolist() == [1.0, 1.4, 1.02]
    assert probes[0].tolist() == [5.0, 5.0, 5.0] and probes[1].tolist() == [5.0, 6.0, 5.0]


def test_a_cpu_cell_records_the_host_around_its_timing():
    from workbench.measure.cell import Cell, TimingConfig, run_cell
    row = run_cell(Cell.make("saxpy", "numpy", "numpy", "float32", {"n": 4099}),
                   TimingConfig(warmup_s=0.0, budget_s=0.01, min_samples=3))
    assert row["status"] == "ok", row["message"]
    assert row["host_slowdown"] >= 1.0 and 0.0 <= row["host_settle_s"] <= host_settle.SETTLE_CAP_S + 0.05
    assert json.loads(row["round_host_slowdowns"]) == [row["host_slowdown"]]


def test_a_short_round_waits_at_most_twice_its_own_time():
    from workbench.measure.timer import TimingConfig
    assert host_settle.settle_cap(TimingConfig(warmup_s=0.01, budget_s=0.04)) == pytest.approx(0.1)
    assert host_settle.settle_cap(TimingConfig(warmup_s=0.1, budget_s=1.0)) == host_settle.SETTLE_CAP_S


def test_timeit_waits_for_the_host_before_each_of_its_rounds(monkeypatch):
    import numpy as np

    import workbench
    seen = []
    real_settle = host_settle.settle

    def counted(*a, **k):
        seen.append(1)
        return real_settle(*a, **k)

    monkeypatch.setattr(host_settle, "settle", counted)
    x = np.ones(1000)
    m = workbench.timeit(np.sum, x, budget_s=0.03, rounds=3)
    assert len(seen) == 3 and len(m.round_medians_s) == 3


def test_a_paired_verdict_leaves_out_a_round_the_slow_host_stretched_as_the_headline_does():
    """03 (reader, busy run): a numpy baseline's note said "round 1 set aside", and its verdicts paired on it."""
    import numpy as np

    from workbench.judge import many
    from workbench.judge.pair_rows import _paired_rounds
    ids = json.dumps(["s:0", "s:1", "s:2", "s:3"])
    base = {"round_medians_s": json.dumps([1.0, 1.5, 1.0, 1.01]), "round_ids": ids,
            "round_host_slowdowns": json.dumps([1.0, 1.4, 1.0, 1.0]), "samples_s": "[1.0]"}
    row = {"round_medians_s": json.dumps([0.5, 0.5, 0.51, 0.5]), "round_ids": ids,
           "round_host_slowdowns": json.dumps([1.0, 1.0, 1.0, 1.0]), "samples_s": "[0.5]"}
    a, b, paired = _paired_rounds(base, row)
    assert paired and a.tolist() == [1.0, 1.0, 1.01] and b.tolist() == [0.5, 0.51, 0.5]
    table = {k: [base.get(k), row.get(k)] for k in base}
    rows = many.Rows(lambda name: table.get(name, [None, None]))
    a2, b2, paired2 = rows.paired_rounds(0, 1)
    assert paired2 and np.array_equal(a2, a) and np.array_equal(b2, b)
    # both sides set aside the same round: the fast path of identical ids must not pair it back in
    both = {**row, "round_medians_s": json.dumps([0.5, 0.8, 0.51, 0.5]),
            "round_host_slowdowns": json.dumps([1.0, 1.4, 1.0, 1.0])}
    table = {k: [base.get(k), both.get(k)] for k in base}
    a3, b3, paired3 = many.Rows(lambda name: table.get(name, [None, None])).paired_rounds(0, 1)
    assert paired3 and a3.tolist() == [1.0, 1.0, 1.01] and b3.tolist() == [0.5, 0.51, 0.5]


def test_a_round_the_host_slowed_is_timed_once_more_and_the_row_says_so(scripted, monkeypatch):
    from workbench.measure.cell import Cell, TimingConfig, run_cell
    from workbench.measure.timer import time_calls as real_time_calls
    calls = []

    def counted(*a, **k):
        calls.append(1)
        return real_time_calls(*a, **k)

    monkeypatch.setattr("workbench.measure.timed.time_calls", counted)
    monkeypatch.setattr(host_settle, "_visits", 0)  # this process's earlier visits do not decide the retry
    monkeypatch.setattr(host_settle, "_retried", 0)
    # settle at speed, slow after the first timing, at speed after the second
    scripted([1.0, 1.3, 1.0, 1.0])
    config = TimingConfig(warmup_s=0.0, budget_s=0.01, min_samples=3)
    row = run_cell(Cell.make("saxpy", "numpy", "numpy", "float32", {"n": 4099}), config)
    assert row["status"] == "ok" and len(calls) == 2 and row["host_retries"] == 1 and row["host_slowdown"] == 1.0
    calls.clear()
    monkeypatch.setenv(host_settle.SETTLE_ENV, "0")  # the wait off: no timing again either
    scripted([1.0, 1.3, 1.0, 1.0])
    row = run_cell(Cell.make("saxpy", "numpy", "numpy", "float32", {"n": 4099}), config)
    assert len(calls) == 1 and row["host_retries"] == 0 and row["host_slowdown"] == pytest.approx(1.3)


def test_a_worker_that_retries_most_visits_stops_retrying(monkeypatch):
    """On a machine kept busy the probe reads slow because a neighbour shares the core: retries buy only time."""
    monkeypatch.setattr(host_settle, "_visits", 0)
    monkeypatch.setattr(host_settle, "_retried", 0)
    for _ in range(host_settle.RETRY_WARMUP):
        assert host_settle.retries_allowed() == host_settle.HOST_RETRIES
        host_settle.count_visit(1)
    assert host_settle.retries_allowed() == 0
    for _ in range(round(host_settle.RETRY_WARMUP / host_settle.MAX_RETRY_SHARE)):
        host_settle.count_visit(0)
    assert host_settle.retries_allowed() == host_settle.HOST_RETRIES  # under the share again


def test_no_retry_that_could_run_past_the_cells_limit(scripted, monkeypatch):
    import time

    from workbench.measure.cell import Cell, TimingConfig, run_cell
    from workbench.measure.timer import time_calls as real_time_calls

    def slow(*a, **k):  # a timing that takes 0.3 s of the cell's 0.5 s
        out = real_time_calls(*a, **k)
        time.sleep(0.3)
        return out

    monkeypatch.setattr("workbench.measure.timed.time_calls", slow)
    monkeypatch.setattr(host_settle, "_visits", 0)
    monkeypatch.setattr(host_settle, "_retried", 0)
    scripted([1.0, 1.3, 1.0, 1.0])  # slow after the first timing: a retry is due, but the limit is near
    row = run_cell(Cell.make("saxpy", "numpy", "numpy", "float32", {"n": 4099}),
                   TimingConfig(warmup_s=0.0, budget_s=0.01, min_samples=3), timeout_s=0.5)
    assert row["status"] == "ok" and row["host_retries"] == 0


def test_the_quartiles_beside_the_headline_are_of_the_same_rounds():
    """timeit printed "33.7 µs median (quartiles 35.2 µs to 44.2 µs)": the quartiles had kept a set-aside round."""
    row = _merged([1.0, 1.4, 1.02], [1.0, 1.35, 1.02])
    assert row["q1_s"] <= row["median_s"] <= row["q3_s"] and row["q3_s"] < 1.4

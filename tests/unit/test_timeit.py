"""workbench.timeit says what the machine was doing: the busy-machine flag and the conditions a sweep's cell gets."""

from __future__ import annotations

import time

import workbench
from workbench.adhoc import timing
from workbench.core.conditions import Conditions

QUICK = {"budget_s": 0.01, "rounds": 2, "warmup_s": 0.0}


def _meter(share: float | None):
    class Meter:
        def start(self):
            pass

        def stop(self):
            return Conditions(other_cpu_share=share, load_avg_1m=7.5, threads="torch 2; OMP_WAIT_POLICY PASSIVE")

    return Meter


def test_a_busy_machine_flags_the_measurement_noisy_and_says_why(monkeypatch):
    monkeypatch.setattr(timing, "ConditionsMeter", _meter(0.9))
    m = workbench.timeit(abs, -3, **QUICK)
    assert m.noisy and "other processes used 90% of the CPU" in m.noise_note
    assert "other processes used 90% of the CPU" in str(m)
    assert (m.other_cpu_share, m.load_avg_1m) == (0.9, 7.5)
    assert m.threads == "torch 2; OMP_WAIT_POLICY PASSIVE"  # the threads the conditions saw, in str() too
    assert str(m).endswith("threads: torch 2; OMP_WAIT_POLICY PASSIVE")


def test_an_idle_or_unknown_machine_adds_no_busy_flag(monkeypatch):
    for share in (0.0, None):
        monkeypatch.setattr(timing, "ConditionsMeter", _meter(share))
        m = workbench.timeit(abs, -3, **QUICK)
        assert m.other_cpu_share == share and "other processes" not in (m.noise_note or "")


def test_the_real_meter_reads_the_machine_once_it_has_a_window():
    workbench.timeit(abs, -3, **QUICK)
    time.sleep(0.3)  # a reading at least conditions.MIN_USABLE_S old: the second call's window is readable
    m = workbench.timeit(abs, -3, **QUICK)
    assert m.other_cpu_share is not None and 0.0 <= m.other_cpu_share <= 1.0
    assert m.load_avg_1m is not None and "OpenMP wait: " in m.threads


def test_a_short_measurement_still_reads_the_machine():
    """issue 39 (08, one core busy): a notebook's first timeit answered in 0.15 s, too short a window to read other
    processes' CPU share, so its busy flag stayed off ("not noisy") beside rows flagged at 51%; the window is now
    stretched to the shortest that reads."""
    from workbench.core import conditions

    conditions._history.clear()   # a fresh process: no older reading to measure from
    m = workbench.timeit(abs, -3, **QUICK)
    assert m.other_cpu_share is not None and m.wall_s >= conditions.MIN_USABLE_S


def test_the_printed_median_lies_inside_the_printed_quartiles():
    """Tutorial 08 asserts it; a round that sampled longer had pulled pooled quartiles above the median."""
    import numpy as _np

    import workbench
    x = _np.random.rand(1 << 14).astype(_np.float32)
    for _ in range(3):
        m = workbench.timeit(_np.sin, x, budget_s=0.02, rounds=3)
        assert m.q1_s <= m.median_s <= m.q3_s, m

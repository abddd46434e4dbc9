"""Conditions during a cell: other processes' CPU time is the machine's busy time minus ours."""

from __future__ import annotations

import sys
from collections import namedtuple

import pytest

from workbench import conditions
from workbench.conditions import ConditionsMeter, probe_gpu_monitor

Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")
Own = namedtuple("Own", "user system children_user children_system")


def test_other_cpu_is_machine_busy_minus_own(monkeypatch):
    machine = iter([Times(10, 0, 5, 100, 0, 0, 0, 1, 0, 0), Times(13, 0, 6, 101, 0, 0, 0, 1.5, 0, 0)])
    own = iter([Own(1.0, 0.5, 0, 0), Own(2.0, 0.5, 0, 0)])
    clock = iter([0.0, 2.0])
    monkeypatch.setattr(conditions.psutil, "cpu_times", lambda: next(machine))
    monkeypatch.setattr(conditions.psutil.Process, "cpu_times", lambda self: next(own))
    monkeypatch.setattr(conditions.psutil, "cpu_count", lambda: 2)
    monkeypatch.setattr(conditions.time, "perf_counter", lambda: next(clock))
    m = ConditionsMeter()
    m.start()
    c = m.stop()
    assert c.other_cpu_s == pytest.approx(4 - 1)  # machine busy +4 s, ours +1 s
    assert c.steal_s == pytest.approx(0.5)
    assert c.other_cpu_share == pytest.approx(3 / (2.0 * 2))


def test_a_failing_gpu_monitor_leaves_gpu_fields_empty():
    class Broken:
        name = "broken"

        def read(self):
            raise RuntimeError("driver gone")

    m = ConditionsMeter(gpu=Broken())
    m.start()
    c = m.stop()
    assert c.gpu_clock_mhz is None and c.gpu_throttle is None


def test_gpu_monitor_readings_land_in_the_conditions():
    class Fake:
        name = "fake"

        def read(self):
            return {"gpu_clock_mhz": 1980.0, "gpu_temp_c": 61.0, "gpu_throttle": "sw power cap"}

    m = ConditionsMeter(gpu=Fake())
    m.start()
    c = m.stop()
    assert (c.gpu_clock_mhz, c.gpu_temp_c, c.gpu_throttle) == (1980.0, 61.0, "sw power cap")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="load average and /proc are Linux facts")
def test_real_reading_on_linux():
    m = ConditionsMeter()
    m.start()
    sum(i * i for i in range(200_000))
    c = m.stop()
    assert c.load_avg_1m is not None and c.load_avg_1m >= 0
    assert c.other_cpu_s is not None and c.other_cpu_s >= 0
    assert 0 <= c.other_cpu_share <= 1


def test_gpu_monitor_probe_says_why_not():
    mon, why = probe_gpu_monitor("cuda")
    if mon is None:
        assert why  # no pynvml here, or no driver: a reason
    mon, why = probe_gpu_monitor("tpu")
    assert mon is None and "no GPU monitor for 'tpu'" in why

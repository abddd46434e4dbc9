"""Past its wall-clock limit, a first call that waits for a core is waited on; a spin or a block is not."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from types import SimpleNamespace

import psutil
import pytest

from workbench.measure import first_call_watch as fcw
from workbench.measure.first_call_watch import FirstCallWatch
from workbench.measure.limits import Limits


class _Scripted:
    """A process whose CPU time is a function of a fake clock."""

    def __init__(self, clock: list[float], rate: float) -> None:
        self.clock, self.rate = clock, rate

    def cpu_times(self):
        return SimpleNamespace(user=self.rate * self.clock[0], system=0.0)


@pytest.fixture
def clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(fcw.time, "perf_counter", lambda: now[0])
    return now


def _watch_for(clock: list[float], rate: float, limit_s: float = 6.0, until: float = 7.0) -> FirstCallWatch:
    watch = FirstCallWatch.start(_Scripted(clock, rate), limit_s)  # type: ignore[arg-type]
    while clock[0] < until:
        clock[0] += 0.05
        watch.sample()
    return watch


def test_a_call_that_got_a_core_and_did_not_return_is_hung(clock):
    assert not _watch_for(clock, rate=1.0).starved()  # 7 s of CPU: more than the 6 s limit stands for


def test_a_blocked_call_is_hung_whatever_the_load(clock):
    assert not _watch_for(clock, rate=0.0).starved()  # no CPU at all: a sleep or a deadlock
    clock[0] = 0.0
    assert not _watch_for(clock, rate=0.005).starved()  # a sleeping poll loop's crumbs


def test_a_call_starved_of_a_core_is_waited_on_until_it_had_the_cpu(clock):
    watch = _watch_for(clock, rate=0.1)  # a tenth of a core: ten processes on the machine's cores
    assert watch.starved()
    while watch.starved():
        clock[0] += 0.5
    assert watch.used_s() >= fcw.CPU_SHARE * 6.0
    assert clock[0] == pytest.approx(fcw.CPU_SHARE * 6.0 / 0.1, abs=1.0)


def test_no_window_yet_means_not_known_to_run(clock):
    watch = FirstCallWatch.start(_Scripted(clock, 0.5), 6.0)  # type: ignore[arg-type]
    assert watch.recent_rate() == 0.0


def test_real_processes_spin_and_sleep_are_told_apart():
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.3)  # interpreters started
        watches = {name: FirstCallWatch.start(psutil.Process(p.pid), limit_s=1000.0)
                   for name, p in (("spin", spin), ("sleep", sleep))}
        t_end = time.perf_counter() + 1.5 * fcw.WINDOW_S
        while time.perf_counter() < t_end:
            for w in watches.values():
                w.sample()
            time.sleep(0.05)
        # With a limit far away, only the running one counts as waiting for its CPU; the sleeping one is blocked.
        assert watches["spin"].starved()
        assert not watches["sleep"].starved()
    finally:
        spin.kill()
        sleep.kill()


def test_in_process_limits_extend_a_starved_first_call_and_never_past_the_run_limit(clock, monkeypatch):
    monkeypatch.setattr("workbench.measure.limits.time.perf_counter", lambda: clock[0])
    monkeypatch.setattr("workbench.measure.limits.psutil.Process", lambda: _Scripted(clock, 0.1))
    limits = Limits.starting_now(10.0, 20.0, first_call_s=6.0)
    limits.start_run()
    assert limits.in_first_call
    first = limits.hard_deadline(0.5)
    assert first == pytest.approx(6.5)
    while clock[0] < 30:
        clock[0] += 0.05
        if clock[0] > limits.hard_deadline(0.5):
            break
    # A tenth of a core: 4.8 s of CPU would take 48 s, so the run limit (20 s) stops it first.
    assert clock[0] == pytest.approx(20.5, abs=0.2)
    assert limits.first_call_deadline <= limits.run_deadline
    assert math.isfinite(limits.first_call_deadline)

"""The host's speed around a CPU cell's timing: waited for before it, read again after it.

WHY: on our shared 2-core VMs the host slows a vCPU by 25-45% for tens to hundreds of milliseconds at a time,
and it does so after the vCPU has been idle. A plain ``np.add`` loop over 16k floats, 30 blocks of 0.2 s with
0.3 s sleeps between them, read 2.22 us in most blocks and 2.7-3.3 us in 3-10 of 30 in every trial; the same loop
spinning between blocks instead of sleeping read 0 slow blocks in 4 of 5 trials (2026-12-07, idle, load 0.3).
Timed in 10 ms windows after a 0.3 s sleep, 20% of the first windows were slow, 15% at 100 ms, 5-7% at 250 ms.
A worker waits (idle) for every visit, so every round started in that window: two back-to-back quick suites read
16% of their cache-resident cells within 5% of each other, one run 17% slower than the other at the median cell,
while the sweep's own speed probe (another process, maybe another vCPU) read the same in both.

So before its warm-up a CPU cell keeps its core busy with a short probe until the probe reads at the best speed
this process has seen (or :data:`SETTLE_CAP_S` passes), and after its timing reads the probe once more. The row
keeps, per round, how slow the host was around it (``round_host_slowdowns``: the probe over this process's best,
the worse of before and after) and the probe's own seconds (``round_host_probes_s``: one fixed workload in every
worker and run, so two runs of one machine can be set side by side, where a slowdown over a worker's own best cannot
tell a run taken wholly in a slow phase of the host). A round the host slowed is timed once more (:data:`HOST_RETRIES`,
``host_retries`` on the row); if it is still slow, :mod:`workbench.measure.rounds` sets it aside from the headline
when another round was taken at speed, and names it. ``WORKBENCH_HOST_SETTLE=0`` turns the wait and the retry off
(the probe after the timing is still read).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from workbench.core import placement
from workbench.core.env_values import env_flag

#: Elements of the probe's arrays: float32, 64 KiB each, in every core's L2.
PROBE_ELEMENTS = 1 << 14
#: Seconds of one probe window; its figure is the median call in it.
WINDOW_S = 0.002
#: Windows the first probe of a process takes to find its best.
FIRST_WINDOWS = 5
#: A window within this factor of the best reads "at speed".
AT_SPEED = 1.04
#: Longest wait for the host before a cell is timed anyway (its slowdown is then on the row), and the share of a
#: round's own warm-up and budget it may take at most: a quick suite's 50 ms round waits up to 0.1 s, not 0.25 s
#: (on a machine kept busy most waits run to the cap, and 300 visits would add over a minute).
SETTLE_CAP_S = 0.25
SETTLE_SHARE = 2.0
#: Environment variable: "0" turns the wait (and the timing again) off.
SETTLE_ENV = "WORKBENCH_HOST_SETTLE"
#: Times a CPU round is timed again when the host ran slow around it (its probe over
#: :data:`~workbench.judge.dips.HOST_SLOW`): each costs the round's warm-up and budget once more.
HOST_RETRIES = 1


class _Probe:
    """``np.add`` over two placed 64 KiB arrays: a fixed cache-resident workload whose time follows the core's
    speed (the slow host read it 1.25-1.45x slower)."""

    def __init__(self) -> None:
        a = np.linspace(0.0, 1.0, PROBE_ELEMENTS, dtype=np.float32)
        self.a, self.b = placement.placed_copy(a, 0), placement.placed_copy(a[::-1].copy(), 1)
        self.out = placement.placed_empty(a.shape, a.dtype, 2)
        self.best = float("inf")
        np.add(self.a, self.b, out=self.out)  # pages and the ufunc's set-up paid before any window

    def window(self, seconds: float = WINDOW_S) -> float:
        """Seconds of the median call over one window of ``seconds``; lowers :attr:`best` when faster."""
        times: list[float] = []
        end = time.perf_counter() + seconds
        while True:
            t0 = time.perf_counter()
            np.add(self.a, self.b, out=self.out)
            t = time.perf_counter() - t0
            times.append(t)
            if t0 + t >= end:
                break
        times.sort()
        m = times[len(times) // 2]
        self.best = min(self.best, m)
        return m


_probe: _Probe | None = None


def _the_probe() -> _Probe:
    global _probe
    if _probe is None:
        _probe = _Probe()
        for _ in range(FIRST_WINDOWS):
            _probe.window()
    return _probe


def settle_enabled() -> bool:
    """Whether a cell waits for the host before its timing (``WORKBENCH_HOST_SETTLE``; on by default)."""
    try:  # read as every switch is (workbench.cli.checks refuses `forever`, which was taken for on, unsaid)
        return env_flag(SETTLE_ENV, True)
    except ValueError:
        return True


#: Share of a worker's visits that may be timed again, once it has made :data:`RETRY_WARMUP` visits. WHY: on a
#: machine kept busy by other processes the probe reads slow because a neighbour shares the core, not because the
#: host moved; a quick suite beside busy tests (other processes 61-65% of the CPU) timed 169 of ~310 visits again,
#: which bought nothing but time. At a quarter, idle quick suites in a phase of the host with 40-55% of rounds slow
#: (17:26-17:35) retried ~80 visits a run and took 124-130 s against 90-102 s without retries, past the demo's two
#: minutes, while half their rounds stayed slow; a tenth bounds that to ~30. Past it the rows say how slow it was.
MAX_RETRY_SHARE = 0.1
RETRY_WARMUP = 12

_visits = 0
_retried = 0


def retries_allowed() -> int:
    """How often a round the slow host stretched is timed again: :data:`HOST_RETRIES`; none with the wait off, or
    once this worker has retried more than :data:`MAX_RETRY_SHARE` of its visits."""
    if not settle_enabled() or (_visits >= RETRY_WARMUP and _retried > MAX_RETRY_SHARE * _visits):
        return 0
    return HOST_RETRIES


def count_visit(retries: int) -> None:
    """Count a timed CPU visit, and whether it was timed again, towards :func:`retries_allowed`."""
    global _visits, _retried
    _visits += 1
    _retried += retries > 0


@dataclass
class HostVisit:
    """One CPU timing's host readings: how long it waited, the probe over its best before and after, and the
    probe's own seconds there (the worse of the two)."""

    settle_s: float = 0.0
    before: float = 1.0
    after: float = 1.0
    probe_s: float | None = None

    @property
    def slowdown(self) -> float:
        """How slow the host ran around the timing: the worse of the readings before and after it."""
        return max(self.before, self.after)

    def facts(self) -> dict[str, float | None]:
        """The row's fields of this visit: its wait, the slowdown around it, and the probe's seconds."""
        return {"host_settle_s": self.settle_s, "host_slowdown": self.slowdown, "host_probe_s": self.probe_s}

    def end(self) -> HostVisit:
        """Read the probe once more, right after the timing."""
        probe = _the_probe()
        m = probe.window()
        self.after = m / probe.best
        self.probe_s = max(self.probe_s or 0.0, m)
        return self


def settle_cap(config: object) -> float:
    """The longest wait before a round of ``config`` (a :class:`~workbench.measure.timer.TimingConfig`)."""
    budget = float(getattr(config, "warmup_s", 0.0) or 0.0) + float(getattr(config, "budget_s", 0.0) or 0.0)
    return min(SETTLE_CAP_S, SETTLE_SHARE * budget)


def settle(deadline: float = float("inf"), cap_s: float = SETTLE_CAP_S) -> HostVisit:
    """Keep this core busy with the probe until one window reads at speed, for at most ``cap_s`` (never past
    ``deadline``); without the wait (``WORKBENCH_HOST_SETTLE=0``), one window's reading."""
    probe = _the_probe()
    t0 = time.perf_counter()
    end = min(t0 + (cap_s if settle_enabled() else 0.0), deadline)
    while True:
        m = probe.window()
        if m <= AT_SPEED * probe.best or time.perf_counter() >= end:
            break
    return HostVisit(settle_s=time.perf_counter() - t0, before=m / probe.best, probe_s=m)

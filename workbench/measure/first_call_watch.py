"""Tell a hung first call from one the machine starved: the first-call limit counts the CPU the call got.

A first call has a short limit of its own (:attr:`CellRequest.first_call_limit_s`) so that a hang costs
seconds, not the whole run limit. On a busy machine an honest first call can pass that limit in wall time
while it waits for a core (a PoCL kernel with other processes on both cores did). So past its wall-clock
limit, a first call still counts as hung only when

- it has had the CPU time the limit stands for (:data:`CPU_SHARE` of it): a spin that never returns gets
  there, a starved honest call gets the time it would have had on a quiet machine; or
- it is not running at all (under :data:`RUNNING_RATE` of a core over the last :data:`WINDOW_S`): a call
  blocked for ever (a sleep, a deadlock) is stopped at the limit, busy machine or not.

The run limit (``--timeout``) bounds every first call whatever this watch says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import psutil

#: Share of the first-call limit, in CPU seconds of the watched process, after which a call past its
#: wall-clock limit counts as hung.
CPU_SHARE = 0.8
#: Below this share of one core over :data:`WINDOW_S` a process counts as not running (blocked), not starved.
RUNNING_RATE = 0.02
#: Seconds of CPU use looked back over to tell blocked from starved.
WINDOW_S = 1.0


def _cpu_s(proc: psutil.Process) -> float | None:
    try:
        t = proc.cpu_times()
        return float(t.user + t.system)
    except (psutil.Error, OSError):
        return None


@dataclass
class FirstCallWatch:
    """The CPU a process has used since its cell's first call started, sampled as the parent polls."""

    proc: psutil.Process
    limit_s: float
    start_cpu_s: float
    samples: list[tuple[float, float]] = field(default_factory=list)

    @classmethod
    def start(cls, proc: psutil.Process, limit_s: float) -> FirstCallWatch:
        cpu = _cpu_s(proc)
        watch = cls(proc, limit_s, cpu if cpu is not None else 0.0)
        watch.samples.append((time.perf_counter(), watch.start_cpu_s))
        return watch

    def sample(self) -> None:
        """Record the process's CPU time now (called on every poll; keeps the last :data:`WINDOW_S` or so)."""
        cpu = _cpu_s(self.proc)
        if cpu is None:
            return
        now = time.perf_counter()
        self.samples.append((now, cpu))
        while len(self.samples) > 2 and now - self.samples[1][0] >= WINDOW_S:
            self.samples.pop(0)

    def used_s(self) -> float:
        return self.samples[-1][1] - self.start_cpu_s

    def recent_rate(self) -> float:
        """Cores' worth of CPU over the last window (0 where there is no window yet)."""
        (t0, c0), (t1, c1) = self.samples[0], self.samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 - t0 >= 0.5 * WINDOW_S else 0.0

    def starved(self) -> bool:
        """Past the wall-clock limit: True while the call runs but has had less CPU than the limit stands
        for (wait on), False when it had that CPU or is blocked (a hang: stop it)."""
        self.sample()
        return self.used_s() < CPU_SHARE * self.limit_s and self.recent_rate() >= RUNNING_RATE

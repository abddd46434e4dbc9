"""A fake GPU for tests (issue 37): a backend whose clock ramps after idle, whose launches cost host time and whose
kernels take known device time, with a monitor that reads its clock and energy as NVML would.

The device is a timeline on the host's clock: a kernel launched at host time ``t`` (after the launch's host cost,
spun) starts at ``max(t, free_at)`` and takes ``work_s * max_mhz / sm_mhz`` — its work at full clock, stretched by
the clock it starts at. The SM clock rises with device-busy time (``ramp_s`` from idle to max) and falls back to
``idle_mhz`` after ``idle_after_s`` with nothing to do. ``synchronize`` waits (spins) until the device is free,
so the harness's own clock agrees with the device's. Its arrays are numpy arrays: the kernels compute for real.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.backends import Backend, Capabilities, DeviceInfo, Probe, Runtime, Sample, Timer
from workbench.backends.base import TimingModeUnavailable
from workbench.backends.memory import TracemallocMemory

NAME = "fakegpu"


def _spin(until: float) -> None:
    while time.perf_counter() < until:
        pass


class FakeArray(np.ndarray):
    """The fake GPU's device array."""


class FakeDevice:
    """The device's timeline, clock and energy counter."""

    def __init__(self, *, work_s: float = 50e-6, launch_s: float = 20e-6, max_mhz: float = 2000.0,
                 idle_mhz: float = 500.0, ramp_s: float = 0.02, idle_after_s: float = 0.05, l2_bytes: int = 1 << 20,
                 power_w: float = 300.0) -> None:
        self.work_s, self.launch_s, self.max_mhz, self.idle_mhz = work_s, launch_s, max_mhz, idle_mhz
        self.ramp_s, self.idle_after_s, self.l2_bytes, self.power_w = ramp_s, idle_after_s, l2_bytes, power_w
        self.free_at = 0.0
        self.warm_busy_s = 0.0
        self.energy_j = 0.0
        #: (start, end) of every kernel, on the host's clock.
        self.kernels: list[tuple[float, float]] = []
        self.flushed_bytes: list[int] = []
        self.throttle = ""

    def sm_mhz(self, at: float | None = None) -> float:
        at = time.perf_counter() if at is None else at
        if at - self.free_at > self.idle_after_s:
            self.warm_busy_s = 0.0
        share = min(1.0, self.warm_busy_s / self.ramp_s) if self.ramp_s > 0 else 1.0
        return self.idle_mhz + (self.max_mhz - self.idle_mhz) * share

    def launch(self, work_s: float | None = None, launch_cost: bool = True) -> None:
        """One kernel: the launch's host time spun, then the kernel queued on the timeline."""
        if launch_cost:
            _spin(time.perf_counter() + self.launch_s)
        now = time.perf_counter()
        start = max(now, self.free_at)
        dur = (self.work_s if work_s is None else work_s) * self.max_mhz / self.sm_mhz(start)
        self.free_at = start + dur
        self.warm_busy_s += dur
        self.energy_j += dur * self.power_w
        self.kernels.append((start, self.free_at))

    def synchronize(self) -> None:
        _spin(self.free_at)


class FakeLaunchTimer(Timer):
    """Events around the call on the device's timeline: launch gaps included (``launch`` mode)."""

    kind = "fake-event"

    def __init__(self, dev: FakeDevice) -> None:
        self.dev = dev

    def measure(self, fn: Callable[[], Any]) -> Sample:
        self.dev.synchronize()
        t0 = time.perf_counter()
        start = max(t0, self.dev.free_at)
        fn()
        t1 = time.perf_counter()
        end = max(t1, self.dev.free_at)
        self.dev.synchronize()
        return Sample(device_s=end - start, host_s=t1 - t0)


class FakeKernelTimer(Timer):
    """The call's kernels, first start to last end (``kernel`` mode, as CUPTI's records give it)."""

    kind = "fake-cupti"
    timing_mode = "kernel"

    def __init__(self, dev: FakeDevice) -> None:
        self.dev = dev

    def measure(self, fn: Callable[[], Any]) -> Sample:
        self.dev.synchronize()
        first = len(self.dev.kernels)
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        self.dev.synchronize()
        spans = self.dev.kernels[first:]
        return Sample(device_s=spans[-1][1] - spans[0][0], host_s=t1 - t0)


class FakeBackend(Backend):
    """The fake GPU as a backend (``device_class`` cuda): numpy arrays, one fake kernel per variant call."""

    name = NAME
    runtime = NAME
    device_class = "cuda"

    def __init__(self, dev: FakeDevice | None = None, modes: tuple[str, ...] = ("kernel",)) -> None:
        self.dev = dev or FakeDevice()
        self.modes = modes
        self.meter = TracemallocMemory()

    def probe(self) -> Probe:
        return Probe.ok()

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="fake GPU", vendor="tests", kind="gpu", last_level_cache_bytes=self.dev.l2_bytes,
                          versions={NAME: "0.1"})

    def capabilities(self) -> Capabilities:
        return Capabilities(dtypes=("float32", "float64"), device_events=True)

    def from_numpy(self, a: np.ndarray) -> FakeArray:
        return np.ascontiguousarray(a).copy().view(FakeArray)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def empty(self, shape: tuple[int, ...], dtype: str) -> FakeArray:
        return np.empty(shape, dtype=dtype).view(FakeArray)

    def cast(self, x: Any, dtype: str) -> FakeArray:
        return x.astype(dtype)

    def synchronize(self) -> None:
        self.dev.synchronize()

    def timer(self) -> Timer:
        return FakeLaunchTimer(self.dev)

    def mode_timer(self, mode: str) -> Timer:
        if mode == "kernel" and "kernel" in self.modes:
            return FakeKernelTimer(self.dev)
        raise TimingModeUnavailable(f"the fake GPU was made without {mode} mode")

    def _touch(self, buf: Any) -> None:
        self.dev.flushed_bytes.append(int(buf.nbytes))
        self.dev.launch(work_s=buf.nbytes / 1e12, launch_cost=False)


class FakeMonitor:
    """NVML's view of the fake device: its SM clock now, its maximum, a throttle reason and an energy counter."""

    name = "fake-nvml"

    def __init__(self, dev: FakeDevice, energy: bool = True) -> None:
        self.dev, self.energy = dev, energy
        self.reads = 0

    def read(self) -> dict[str, Any]:
        self.reads += 1
        return {"gpu_clock_mhz": self.dev.sm_mhz(), "gpu_temp_c": 60.0, "gpu_throttle": self.dev.throttle,
                "gpu_mem_clock_mhz": 2600.0, "gpu_power_w": self.dev.power_w}

    def max_sm_clock_mhz(self) -> float:
        return self.dev.max_mhz

    def energy_j(self) -> float | None:
        return self.dev.energy_j if self.energy else None


DECLARATION = Runtime(NAME, modules=(__name__.split(".")[0],), marker="P", event_timers=("fake-event",),
                      array_backend=lambda x: NAME if isinstance(x, FakeArray) else None)

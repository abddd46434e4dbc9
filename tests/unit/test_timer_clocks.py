"""A row's timing mode is said with the clock that read it (issue 39: 02 labelled PoCL's and lavapipe's rows
"host" while their timers were the device's own timestamps)."""

from __future__ import annotations

import importlib

from workbench.backends import registry
from workbench.backends.base import Timer
from workbench.backends.timer_clocks import CLOCKS, mode_and_clock, reads_host_clock, timer_clock


def _timer_kinds() -> set[str]:
    for module in ("opencl_backend", "vulkan_backend", "cuda_timers"):
        importlib.import_module(f"workbench.backends.{module}")   # their Timer classes, no runtime loaded
    todo, kinds = list(Timer.__subclasses__()), set()
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("workbench."):   # the package's timers, not a test's stand-in
            kinds.add(cls.kind)
    return kinds | {k for rt in registry.runtimes() for k in rt.event_timers}


def test_every_timer_kind_of_the_package_is_described():
    missing = _timer_kinds() - set(CLOCKS)
    assert not missing, f"timer kinds with no clock said: {sorted(missing)}"


def test_a_cpu_devices_host_mode_read_by_device_timestamps_says_device_clock():
    for kind in ("opencl-profiling", "wgpu-timestamp", "cuda-event"):
        label = mode_and_clock("host", kind)
        assert "device clock" in label and kind in label and "host clock" not in label
        assert not reads_host_clock(kind) and "device's clock" in timer_clock(kind)
    assert mode_and_clock("host", "sync+perf_counter") == "host span, host clock (sync+perf_counter)"
    assert "does not describe" in timer_clock("sundial") and "clock unknown" in mode_and_clock("host", "sundial")

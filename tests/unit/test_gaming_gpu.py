"""GPU forms of gaming the clock (issue 23, class 7), with fakes: no GPU here.

A fake device keeps a clock per stream: a "kernel" on a stream keeps that stream busy for its duration; an
event completes when its stream's earlier work has; synchronising the device waits for every stream. The
workbench's own :class:`~workbench.backends.base.EventTimer` runs on it, as it does on torch-cuda, CuPy and
triton-cuda. Checked: work left on a side stream escapes the event timer but not the device-wide
synchronisation that ends every sample; outputs are copied at return on the stream (``clone``), not after a
sync; the persisting L2 set-aside is reset before each CUDA cell; TF32 settings are recorded and named.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from workbench.backends.base import EventTimer
from workbench.measure import audit
from workbench.measure.audit import FINISHES_LATER, NoAudit
from workbench.measure.timer import TimingConfig, time_calls


class FakeDevice:
    """Streams as clocks: each is busy until a perf_counter time."""

    def __init__(self) -> None:
        self.busy = {"current": 0.0, "side": 0.0}

    def launch(self, seconds: float, stream: str = "current") -> None:
        now = time.perf_counter()
        self.busy[stream] = max(now, self.busy[stream]) + seconds

    def synchronize(self) -> None:  # the whole device: every stream
        _sleep_until(max(self.busy.values()))

    def event(self) -> FakeEvent:
        return FakeEvent(self)


class FakeEvent:
    def __init__(self, device: FakeDevice) -> None:
        self.device, self.at = device, 0.0

    def record(self) -> None:  # on the current stream: complete when its earlier work is
        self.at = max(time.perf_counter(), self.device.busy["current"])

    def synchronize(self) -> None:
        _sleep_until(self.at)


def _sleep_until(t: float) -> None:
    while time.perf_counter() < t:
        time.sleep(min(1e-4, max(0.0, t - time.perf_counter())))


class WatchOnly(NoAudit):
    """No outputs to audit (the fake kernels compute nothing), but the timer and the device are watched."""

    watch_timer = True


def _time(device: FakeDevice, call, samples: int = 3) -> None:
    timer = EventTimer("cuda-event", device.event, lambda a, b: b.at - a.at, device.synchronize)
    cfg = TimingConfig(warmup_s=0.0, budget_s=0.0, min_samples=samples, min_sample_s=0.0)
    return time_calls(timer, [call], cfg, audit=WatchOnly("fakes"), sync=device.synchronize)


def test_work_on_the_timed_stream_passes():
    dev = FakeDevice()
    t = _time(dev, lambda: dev.launch(1e-3))
    assert all(s > 0.8e-3 for s in t.samples_s)


def test_work_left_on_a_side_stream_is_caught_by_the_device_wide_sync():
    dev = FakeDevice()
    timer = EventTimer("cuda-event", dev.event, lambda a, b: b.at - a.at, dev.synchronize)
    side = timer.measure(lambda: dev.launch(2e-3, "side"))
    assert side.device_s < 0.5e-3  # the stream's events alone see (almost) nothing
    with pytest.raises(audit.AuditFailed, match=FINISHES_LATER):
        _time(dev, lambda: dev.launch(2e-3, "side"))


def test_one_long_tail_is_the_hosts_but_work_left_behind_again_fails():
    """A single long synchronisation (the host lost the core, a page fault) does not fail a correct kernel; work
    left on a side stream at every other call does."""
    dev = FakeDevice()
    calls = iter(range(10**6))

    def once() -> None:
        dev.launch(2e-3, "side" if next(calls) == 1 else "current")

    t = _time(dev, once)
    assert len(t.samples_s) >= 3
    dev, calls = FakeDevice(), iter(range(10**6))

    def every_other() -> None:
        dev.launch(2e-3, "side" if next(calls) % 2 else "current")

    # a dozen samples: on a loaded machine a tail whose synchronisation lost its core is set aside as the host's
    # (CI once saw both tails of three samples preempted, and nothing failed); six tails leave two that count
    with pytest.raises(audit.AuditFailed, match=FINISHES_LATER):
        _time(dev, every_other, samples=12)


def test_a_cpu_timer_is_not_synchronised_twice():
    """Only event timers stop at a stream's event; a host-clock timer already ends with the device's sync."""
    calls = []
    timer = EventTimer("cuda-event", FakeDevice().event, lambda a, b: 0.0, lambda: None)
    timer.kind = "sync+perf_counter"
    time_calls(timer, [lambda: None], TimingConfig(warmup_s=0, budget_s=0, min_samples=2, min_sample_s=0),
               audit=WatchOnly("fakes"), sync=lambda: calls.append(1))
    assert calls == []


def test_outputs_are_copied_on_the_stream_at_return():
    class Tensor:
        def __init__(self):
            self.cloned = 0

        def clone(self):
            self.cloned += 1
            return "copy enqueued on the current stream"

        def copy(self):  # pragma: no cover - a tensor is cloned, never copied through the host
            raise AssertionError("read through the host after a sync")

    t = Tensor()
    assert audit.snapshot(t) == "copy enqueued on the current stream" and t.cloned == 1
    a = np.arange(4.0)
    snap = audit.snapshot(a)
    a[:] = 0
    assert snap.tolist() == [0.0, 1.0, 2.0, 3.0]  # a host array is copied at once


class FakeCudart:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def cudaDeviceSetLimit(self, limit, value):  # noqa: N802 - the CUDA runtime's name
        self.calls.append(("cudaDeviceSetLimit", limit, value))
        return 0

    def cudaCtxResetPersistingL2Cache(self):  # noqa: N802
        self.calls.append(("cudaCtxResetPersistingL2Cache",))
        return 0


def test_persisting_l2_is_reset_before_a_cuda_cell_only():
    lib = FakeCudart()
    cuda = type("B", (), {"device_class": "cuda"})()
    assert audit.reset_persisting_l2(cuda, cudart=lambda: lib)
    assert lib.calls == [("cudaDeviceSetLimit", 0x06, 0), ("cudaCtxResetPersistingL2Cache",)]
    for other in ("cpu", "rocm", "opencl-gpu"):
        assert not audit.reset_persisting_l2(type("B", (), {"device_class": other})(), cudart=lambda: lib)
    assert len(lib.calls) == 2
    assert not audit.reset_persisting_l2(cuda, cudart=lambda: None)  # no CUDA runtime loaded: nothing to reset


def test_every_timed_cell_resets_the_persisting_l2_first():
    import inspect

    from workbench.measure import timed

    src = inspect.getsource(timed.time_case)
    # the timing loop runs in _timed_at_speed (the host waited for, a slowed round timed again), called after the reset
    assert src.index("reset_persisting_l2(backend)") < src.index("_timed_at_speed(")
    assert "time_calls(" in inspect.getsource(timed._timed_at_speed)


def test_tf32_settings_are_recorded_and_named():
    torch = pytest.importorskip("torch")
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    before = (matmul.allow_tf32, cudnn.allow_tf32)
    try:
        matmul.allow_tf32 = True
        got = audit.precision_settings()
        assert got["torch_matmul_allow_tf32"] is True
        assert "TF32 allowed in a float32 run" in audit.reduced_precision(got, "float32")
        json.dumps(got)
        matmul.allow_tf32 = cudnn.allow_tf32 = False
        with torch_precision(torch, "highest"):
            assert audit.reduced_precision(audit.precision_settings(), "float32") == ""
        with torch_precision(torch, "high"):
            assert "matmul precision 'high'" in audit.reduced_precision(audit.precision_settings(), "float32")
    finally:
        matmul.allow_tf32, cudnn.allow_tf32 = before


class torch_precision:  # noqa: N801 - used as a context manager
    def __init__(self, torch, value):
        self.torch, self.value = torch, value

    def __enter__(self):
        self.before = self.torch.get_float32_matmul_precision()
        self.torch.set_float32_matmul_precision(self.value)

    def __exit__(self, *exc):
        self.torch.set_float32_matmul_precision(self.before)

"""The accelerator paths no CI machine can run, exercised through fake runtimes: event timer, meters, cupy, torch-cuda.

The fakes stand in for ``cupy`` and ``torch`` in ``sys.modules``; a fake event
records the tick of a clock that advances by one millisecond per record, so a
timed call measures exactly 1 ms of device time.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import types
from typing import Any

import numpy as np
import pytest

from workbench.backends.base import EventTimer
from workbench.backends.cupy_backend import CupyBackend
from workbench.backends.memory import AllocatorMemory, FallbackMemory, SampledPeakMemory
from workbench.backends.torch_backend import TorchBackend
from workbench.backends.torch_devices import MpsDevice

MIB = 2**20


class FakeEvent:
    clock = itertools.count()

    def __init__(self, *args: Any, **kwargs: Any):
        self.ms = None

    def record(self) -> None:
        self.ms = next(FakeEvent.clock)

    def synchronize(self) -> None:
        assert self.ms is not None

    def elapsed_time(self, end: FakeEvent) -> float:  # torch's spelling
        return float(end.ms - self.ms)


def module(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def fake_cupy(used: list[int], hip: bool = False) -> types.ModuleType:
    pool = types.SimpleNamespace(used_bytes=lambda: used[0], free_all_blocks=lambda: None)
    props = {"name": b"Fake GPU\x00", "major": 9, "minor": 0, "warpSize": 32, "sharedMemPerBlock": 49152,
             "maxThreadsPerBlock": 1024, "totalGlobalMem": 80 * 2**30, "multiProcessorCount": 132,
             "clockRate": 1980000, "l2CacheSize": 50 * MIB, "gcnArchName": b"gfx942"}
    runtime = types.SimpleNamespace(is_hip=hip, getDeviceCount=lambda: 1, getDeviceProperties=lambda i: props,
                                    deviceSynchronize=lambda: None, runtimeGetVersion=lambda: 13020,
                                    driverGetVersion=lambda: 13020)
    cuda = types.SimpleNamespace(is_available=lambda: True, runtime=runtime, Event=FakeEvent,
                                 Device=lambda i: contextlib.nullcontext(),
                                 get_elapsed_time=lambda start, end: float(end.ms - start.ms))
    return module("cupy", __version__="14.0.0", cuda=cuda, get_default_memory_pool=lambda: pool,
                  get_default_pinned_memory_pool=lambda: pool, asarray=np.array, empty=np.empty,
                  asnumpy=np.asarray)


def test_event_timer_times_between_events_and_samples_after():
    calls: list[str] = []
    timer = EventTimer("cuda-event", FakeEvent, lambda s, e: (e.ms - s.ms) / 1e3, lambda: calls.append("sync"),
                       scope=contextlib.nullcontext, after=lambda: calls.append("after"))
    sample = timer.measure(lambda: calls.append("fn"))
    assert calls == ["sync", "fn", "after"] and timer.kind == "cuda-event"
    assert sample.device_s == pytest.approx(1e-3) and sample.host_s >= 0


@pytest.mark.parametrize("hip", [False, True])
def test_cupy_on_a_fake_device(monkeypatch: pytest.MonkeyPatch, hip: bool):
    used = [0]
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(used, hip))
    b = CupyBackend()
    assert b.probe().available and b.device_class == ("rocm" if hip else "cuda")
    info, caps = b.device_info(), b.capabilities()
    assert info.name == "Fake GPU" and info.vendor == ("AMD" if hip else "NVIDIA")
    assert caps.device_events and caps.compiles_device_code and caps.warp_size == 32
    timer = b.timer()
    assert timer.kind == ("hip-event" if hip else "cuda-event")

    def kernel() -> None:
        used[0] = 3 * MIB

    assert timer.measure(kernel).device_s == pytest.approx(1e-3)
    used[0] = MIB  # the temporary is gone; the timer sampled it
    m = b.memory()
    assert (m.current_bytes, m.peak_bytes) == (MIB, 3 * MIB) and "pool" in m.method
    b.reset_peak_memory()
    assert b.memory().peak_bytes == MIB
    assert b.to_numpy(b.from_numpy(np.ones(3, np.float32))).tolist() == [1, 1, 1]
    b.free_memory()


def fake_torch(allocated: list[int], log: list[str]) -> types.ModuleType:
    props = types.SimpleNamespace(name="Fake H100", major=9, minor=0, total_memory=80 * 2**30,
                                  multi_processor_count=132, clock_rate=1980000, L2_cache_size=50 * MIB)
    peak = [0]

    def alloc(n: int) -> None:
        allocated[0] = n
        peak[0] = max(peak[0], n)

    cuda = types.SimpleNamespace(
        is_available=lambda: True, synchronize=lambda: log.append("sync"), get_device_properties=lambda i: props,
        memory_allocated=lambda i: allocated[0], max_memory_allocated=lambda i: peak[0],
        reset_peak_memory_stats=lambda i: peak.__setitem__(0, allocated[0]),
        empty_cache=lambda: log.append("empty_cache"), alloc=alloc)
    return module("torch", __version__="2.13.0+cu130", cuda=cuda, Event=FakeEvent,
                  version=types.SimpleNamespace(cuda="13.0", hip=None),
                  backends=types.SimpleNamespace(cudnn=types.SimpleNamespace(is_available=lambda: False)),
                  empty=lambda *a, **k: None)


def test_torch_cuda_on_a_fake_device(monkeypatch: pytest.MonkeyPatch):
    allocated, log = [0], []
    torch = fake_torch(allocated, log)
    monkeypatch.setitem(sys.modules, "torch", torch)
    b = TorchBackend("cuda")
    assert b.probe().available and b.device == "cuda:0" and b.device_class == "cuda"
    info = b.device_info()
    assert info.name == "Fake H100" and info.versions["cuda"] == "13.0" and info.clock_mhz == 1980
    timer = b.timer()
    assert timer.kind == "torch-event"
    assert timer.measure(lambda: torch.cuda.alloc(4 * MIB)).device_s == pytest.approx(1e-3)
    assert log == ["sync"]
    torch.cuda.alloc(MIB)
    m = b.memory()
    assert (m.current_bytes, m.peak_bytes) == (MIB, 4 * MIB) and m.method.startswith("torch.cuda allocator")
    b.reset_peak_memory()
    assert b.memory().peak_bytes == MIB
    b.free_memory()
    assert log[-1] == "empty_cache"


def test_mps_peak_is_sampled_where_torch_accelerator_does_not_serve_it():
    current = [0]
    torch = module("torch", mps=types.SimpleNamespace(current_allocated_memory=lambda: current[0]),
                   accelerator=types.SimpleNamespace(current_accelerator=lambda: None))
    meter = MpsDevice("mps").meter(torch)
    assert isinstance(meter, SampledPeakMemory)
    current[0] = 5 * MIB
    meter.sample()  # what the event timer does after each call
    current[0] = MIB
    assert (meter.stats().current_bytes, meter.stats().peak_bytes) == (MIB, 5 * MIB)
    meter.reset()
    assert meter.stats().peak_bytes == MIB


def test_fallback_meter_answers_when_the_primary_raises():
    def broken() -> int:
        raise RuntimeError("MPS stats not implemented")

    fallback = SampledPeakMemory(lambda: 7, "sampled")
    meter = FallbackMemory(AllocatorMemory(broken, broken, lambda: None, "allocator"), fallback, (RuntimeError,))
    assert meter.stats().method == "sampled" and meter.stats().peak_bytes == 7
    working = FallbackMemory(AllocatorMemory(lambda: 1, lambda: 2, lambda: None, "allocator"), fallback,
                             (RuntimeError,))
    assert working.stats().method == "allocator" and working.stats().peak_bytes == 2

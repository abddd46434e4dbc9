"""Every device is a backend: ``torch-cuda``, ``torch-cuda:1`` ... ``cupy:1``, ``triton-cuda:1``, with patterns.

No GPU here: device counts and probes are faked (``torch.cuda.device_count``, cupy's ``getDeviceCount``),
and what a backend asks torch about its device is recorded, to check each device asks about itself.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from workbench.backends.base import Probe
from workbench.sweep.selection import BackendUnavailable, select_backends


@pytest.fixture
def registry(fresh_registry, monkeypatch):
    """The registry with nothing discovered yet (devices not counted)."""
    monkeypatch.setattr(fresh_registry, "_modules", {})
    monkeypatch.setattr(fresh_registry, "_enumerated", set())
    return fresh_registry


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch sees ``n`` CUDA devices (cuda backends probe available); returns a setter for ``n``."""
    torch = pytest.importorskip("torch")
    from workbench.backends.torch_backend import TorchBackend

    state = {"n": 3}
    real_probe = TorchBackend._probe_uncached

    def probe(self):
        if self.device_type == "cuda":
            return Probe.ok() if self.device_index < state["n"] else Probe.missing("no such device")
        return real_probe(self)

    monkeypatch.setattr(TorchBackend, "_probe_uncached", probe)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: state["n"])
    return lambda n: state.update(n=n)


def test_each_cuda_device_is_a_backend(registry, fake_cuda):
    names = [b.name for b in registry.matching("torch-cuda:*")]
    assert names == ["torch-cuda", "torch-cuda:1", "torch-cuda:2"]
    assert [registry.get(n).device for n in names] == ["cuda:0", "cuda:1", "cuda:2"]
    assert registry.get("torch-cuda:0") is registry.get("torch-cuda")  # device 0 keeps its name; :0 is an alias
    assert {"torch-cuda:1", "torch-cuda:2"} <= set(registry.all_backends())
    assert [b.name for b in select_backends(["torch-cuda:*"])] == names
    assert [b.name for b in select_backends(["torch-cuda:[12]", "torch-cuda:1"])] == ["torch-cuda:1", "torch-cuda:2"]
    unnamed = [b.name for b in select_backends(None)]  # naming none: device 0 of each runtime, not every GPU
    assert "torch-cuda" in unnamed and "torch-cuda:1" not in unnamed


def test_a_device_is_looked_up_by_name_without_listing_everything(registry, fake_cuda):
    b = registry.get("torch-cuda:2")
    assert (b.name, b.device, b.device_index) == ("torch-cuda:2", "cuda:2", 2)
    assert "workbench.backends.cupy_backend" not in registry._modules  # only torch's module was asked


def test_no_device_gives_one_unavailable_backend(registry, fake_cuda):
    fake_cuda(0)
    assert [b.name for b in registry.matching("torch-cuda:*")] == ["torch-cuda"]
    with pytest.raises(BackendUnavailable) as err:
        select_backends(["torch-cuda:*"])
    assert str(err.value).count("is unavailable here") == 1 and "torch-cuda" in str(err.value)
    with pytest.raises(ValueError, match="unknown backend 'torch-cuda:1'"):
        registry.get("torch-cuda:1")


def test_a_pattern_that_matches_nothing_says_so(registry):
    with pytest.raises(ValueError, match="matches no backend.*valid backends"):
        select_backends(["nosuch-*"])


def test_each_device_asks_about_itself(registry, fake_cuda, monkeypatch):
    """Device info and memory of torch-cuda:1 come from device 1, not device 0."""
    torch = pytest.importorskip("torch")
    asked: list[tuple[str, int]] = []
    props = SimpleNamespace(name="Fake GPU", total_memory=80 << 30, major=9, minor=0, multi_processor_count=132,
                            clock_rate=None, L2_cache_size=50 << 20)

    def record(what, value):
        def fn(index=None):
            # only the workbench's own questions: on a real GPU torch itself asks about every device it counts
            # (devices 0, 1 and 2 appeared on an H100 machine)
            if sys._getframe(1).f_globals.get("__name__", "").startswith("workbench"):
                asked.append((what, index))
            return value
        return fn

    monkeypatch.setattr(torch.cuda, "get_device_properties", record("props", props))
    monkeypatch.setattr(torch.cuda, "memory_allocated", record("allocated", 1))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", record("peak", 2))
    monkeypatch.setattr(torch.cuda, "synchronize", record("sync", None))
    monkeypatch.setattr(torch.cuda, "set_device", record("current", None))
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    b = registry.get("torch-cuda:1")
    info = b.device_info()
    assert info.total_memory_bytes == 80 << 30 and info.name == "Fake GPU"
    b.meter.stats()
    b.synchronize()
    b._kind.activate(torch)  # before arrays are made or timed: Triton launches on the current device
    assert {w for w, _ in asked} == {"props", "allocated", "peak", "sync", "current"}
    assert {i for _, i in asked} == {1}, asked


def test_each_cupy_device_is_a_backend(registry, monkeypatch):
    cp = pytest.importorskip("cupy")
    from workbench.backends.cupy_backend import CupyBackend

    monkeypatch.setattr(CupyBackend, "_probe_uncached", lambda self: Probe.ok())
    monkeypatch.setattr(cp.cuda.runtime, "getDeviceCount", lambda: 2)
    found = registry.matching("cupy:*")
    assert [(b.name, b.device_id) for b in found] == [("cupy", 0), ("cupy:1", 1)]
    assert registry.get("cupy:0") is registry.get("cupy")
    assert registry.get("cupy").name == "cupy"  # the name existing stores and docs use


def test_cupy_without_a_device_lists_one_backend(registry):
    pytest.importorskip("cupy")
    found = registry.matching("cupy*")
    if found and found[0].probe().available:
        pytest.skip("CuPy sees a device here (the GPU machine): this checks the machines without one")
    assert [b.name for b in found] == ["cupy"] and not found[0].probe().available


def test_triton_gpu_backends_follow_device_naming(registry, fake_cuda, monkeypatch):
    from workbench.backends import triton_backend

    monkeypatch.setattr(triton_backend, "_triton_found", lambda: True)
    fake_cuda(2)
    names = [b.name for b in registry.matching("triton-cuda*")]
    assert names == ["triton-cuda", "triton-cuda:1"]
    assert registry.get("triton-cuda:1").device == "cuda:1"

"""Accelerator adapters on a machine without the accelerator: imported for real, unavailable with a reason.

Where the task's machine does have a GPU the probes answer available and these
tests skip: they check the "why not" path, not the hardware.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from workbench.backends import BackendUnavailable, cupy_backend, opencl_backend, registry, torch_backend

ACCELERATORS = {  # backend -> words its reason must contain (the package or driver it lacks)
    "cupy": ("CUDA", "driver"),
    "torch-cuda": ("CUDA",),
    "torch-mps": ("MPS",),
    "torch-xpu": ("XPU",),
}


@pytest.mark.parametrize("name", sorted(ACCELERATORS))
def test_accelerator_probes_unavailable_with_reason(name: str):
    b = registry.all_backends()[name]
    probe = b.probe()
    if probe.available:
        pytest.skip(f"{name} is really available here")
    assert probe.reason and all(w in probe.reason for w in ACCELERATORS[name]), probe.reason
    assert name not in registry.available_backends()
    for call in (b.require, b.device_info, b.capabilities, b.memory, b.synchronize, b.timer,
                 lambda: b.from_numpy(np.ones(3, np.float32)), lambda: b.empty((2,), "float32")):
        with pytest.raises(BackendUnavailable, match=name):
            call()


def test_torch_cpu_build_reasons_name_the_build():
    import torch

    if torch.version.cuda or getattr(torch.version, "hip", None) or torch.version.xpu:
        pytest.skip("not a CPU-only torch build")
    for t in ("cuda", "xpu"):
        reason = registry.get(f"torch-{t}").probe().reason
        assert f"torch {torch.__version__} was built without {t.upper()}" in reason, reason
    assert registry.get("torch-cuda").device == "cuda:0"
    assert registry.get("torch-cpu").device == "cpu"


def test_cupy_imports_and_says_why():
    import cupy

    b = cupy_backend.CupyBackend()
    if cupy.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert not b.probe().available and "no CUDA device/driver" in b.probe().reason
    assert b.device_id == 0 and b.device_class == "cuda"
    b.free_memory()  # must not touch the driver when unavailable


def test_without_torch_every_torch_backend_says_how_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    backends = torch_backend.discover()
    assert {b.name for b in backends} >= {"torch-cpu", "torch-cuda", "torch-mps", "torch-xpu"}
    for b in backends:
        assert not b.probe().available
        assert "pip install torch==2.13.0" in b.probe().reason


def test_without_cupy_the_reason_is_the_pip_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    (b,) = cupy_backend.discover()
    assert not b.probe().available and "pip install cupy-cuda13x" in b.probe().reason


def test_without_pyopencl_a_placeholder_explains(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    (b,) = opencl_backend.discover()
    assert b.name == "opencl" and not b.probe().available
    assert "pip install pyopencl pocl-binary-distribution mako" in b.probe().reason
    with pytest.raises(BackendUnavailable):
        b.device_info()


def test_no_plugin_device_is_invented():
    names = {b.name for b in torch_backend.discover()}
    assert names == {"torch-cpu", "torch-cuda", "torch-mps", "torch-xpu"}


def test_privateuse1_plugin_is_detected(run_python):
    """A renamed PrivateUse1 backend with a device module shows up as torch-<name>, probed for real."""
    code = """
import types, torch
torch.utils.rename_privateuse1_backend("wbdev")
mod = types.ModuleType("wbdev")
mod.is_available = lambda: False
torch._register_device_module("wbdev", mod)
from workbench.backends import torch_backend
(b,) = [b for b in torch_backend.discover() if b.name == "torch-wbdev"]
print(b.device_class, b.device, b.probe().available, b.probe().reason, sep="|")
"""
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    device_class, device, available, reason = res.stdout.strip().splitlines()[-1].split("|")
    assert (device_class, device, available) == ("plugin", "wbdev:0", "False")
    assert "no wbdev device" in reason


def test_cupy_without_a_driver_says_no_driver_not_upgrade(monkeypatch, tmp_path):
    """CUDA says 'driver version is insufficient' where no driver exists at all: the reason must say no driver."""
    exc = RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")
    monkeypatch.setattr(cupy_backend, "NVIDIA_DRIVER_FILE", str(tmp_path / "absent"))
    said = cupy_backend.cuda_missing_reason(exc, "14.2.0")
    assert said.startswith("no CUDA device/driver: no NVIDIA driver is installed") and "cupy 14.2.0" in said
    present = tmp_path / "version"
    present.write_text("NVRM version: 550")
    monkeypatch.setattr(cupy_backend, "NVIDIA_DRIVER_FILE", str(present))   # a driver, too old: CUDA's words stand
    kept = cupy_backend.cuda_missing_reason(exc, "14.2.0")
    assert kept == f"no CUDA device/driver: RuntimeError: {exc} (cupy 14.2.0)"

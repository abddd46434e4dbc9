"""Discovery, names, the automatic choice and its override, third-party entry points, lazy imports."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from workbench.backends import Backend, BackendUnavailable
from workbench.backends.base import Capabilities, DeviceInfo, MemoryStats, Probe


class FakeBackend(Backend):
    """Enough of a backend to test selection; never does real work."""

    def __init__(self, name: str, device_class: str, available: bool = True, runtime: str | None = None):
        self.name, self.device_class, self._ok = name, device_class, available
        self.runtime = runtime or name.split("-")[0]

    def probe(self) -> Probe:
        return Probe.ok() if self._ok else Probe.missing("fake: not here")

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name=f"fake {self.name}")

    def capabilities(self) -> Capabilities:
        return Capabilities()

    def from_numpy(self, a: np.ndarray) -> np.ndarray:
        return a.copy()

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        return x

    def empty(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        return np.empty(shape, dtype)

    def synchronize(self) -> None:
        pass

    def memory(self) -> MemoryStats:
        return MemoryStats(0, 0, "none")

    def reset_peak_memory(self) -> None:
        pass


def _install(registry, *backends: Backend) -> None:
    registry._cache = {b.name: b for b in backends}


def test_unknown_name_lists_the_valid_ones(fresh_registry):
    with pytest.raises(ValueError) as err:
        fresh_registry.get("no-such-backend")
    message = str(err.value)
    assert "no-such-backend" in message
    known = fresh_registry.all_backends()
    assert {"numpy", "numba", "torch-cpu", "cupy"} <= set(known)  # listed even where not installed
    for name in known:
        assert name in message


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_auto_on_this_machine_is_numpy(fresh_registry):
    """No GPU here: OpenCL devices (PoCL) are CPUs, so nothing outranks the CPU class, where numpy leads."""
    for b in fresh_registry.all_backends().values():
        if b.runtime == "opencl" and b.probe().available:
            assert b.device_class == "cpu"
    assert fresh_registry.set_backend("auto").name == "numpy"
    assert fresh_registry.available_backends()[0] == "numpy"


@pytest.mark.parametrize("present, expected", [
    (["numba", "numpy", "torch-cpu", "opencl-0"], "numpy"),
    (["numba", "torch-cpu", "opencl-0"], "numba"),
    (["numpy", "opencl-1", "opencl-0"], "opencl-1"),           # an OpenCL GPU beats every CPU
    (["numpy", "opencl-1", "opencl-2"], "opencl-1"),           # GPU (40) before accelerator (45)
    (["numpy", "opencl-1", "torch-npu"], "torch-npu"),         # vendor plugins before OpenCL
    (["opencl-1", "torch-npu", "torch-mps"], "torch-mps"),
    (["torch-mps", "torch-xpu"], "torch-xpu"),
    (["torch-xpu", "torch-cuda", "numpy"], "torch-cuda"),
    (["torch-xpu", "cupy-rocm"], "cupy-rocm"),
])
def test_auto_priority(fresh_registry, present, expected):
    pool = {b.name: b for b in [
        FakeBackend("numpy", "cpu"), FakeBackend("numba", "cpu"), FakeBackend("torch-cpu", "cpu"),
        FakeBackend("opencl-0", "cpu"), FakeBackend("opencl-1", "opencl-gpu"),
        FakeBackend("opencl-2", "opencl-accelerator"), FakeBackend("torch-npu", "plugin"),
        FakeBackend("torch-mps", "mps"), FakeBackend("torch-xpu", "xpu"), FakeBackend("torch-cuda", "cuda"),
        FakeBackend("cupy-rocm", "rocm", runtime="cupy")]}
    unavailable_cuda = FakeBackend("cupy", "cuda", available=False)  # unavailable never wins
    _install(fresh_registry, unavailable_cuda, *(pool[n] for n in present))
    assert fresh_registry.auto_backend().name == expected


def test_runtime_alias_means_best_device(fresh_registry):
    _install(fresh_registry, FakeBackend("torch-cpu", "cpu", runtime="torch"),
             FakeBackend("torch-cuda", "cuda", runtime="torch"), FakeBackend("torch-mps", "mps", runtime="torch"))
    assert fresh_registry.get("torch").name == "torch-cuda"


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_environment_override(fresh_registry, monkeypatch: pytest.MonkeyPatch):
    here = [n for n in ("numba", "torch-cpu", "numpy") if fresh_registry.get(n).available]
    monkeypatch.setenv("WORKBENCH_BACKEND", here[0])
    assert fresh_registry.set_backend("auto").name == here[0]
    assert fresh_registry.get_backend().name == here[0]
    for name in here[1:]:
        monkeypatch.setenv("WORKBENCH_BACKEND", name)
        assert fresh_registry.auto_backend().name == name
    if "numba" not in here:  # an override naming an installed-but-absent runtime says why
        monkeypatch.setenv("WORKBENCH_BACKEND", "numba")
        with pytest.raises(BackendUnavailable, match="pip install numba"):
            fresh_registry.auto_backend()
    monkeypatch.setenv("WORKBENCH_BACKEND", "cupy")
    if not fresh_registry.get("cupy").available:
        with pytest.raises(BackendUnavailable, match="cupy"):
            fresh_registry.auto_backend()
    monkeypatch.setenv("WORKBENCH_BACKEND", "bogus")
    with pytest.raises(ValueError, match="valid backends"):
        fresh_registry.auto_backend()


def test_explicit_unavailable_backend_is_refused(fresh_registry):
    if fresh_registry.get("torch-cuda").available:
        pytest.skip("CUDA is really here")
    with pytest.raises(BackendUnavailable, match="torch-cuda"):
        fresh_registry.set_backend("torch-cuda")


PLUGIN = '''
from workbench.backends.numpy_backend import NumpyBackend

class AcmeBackend(NumpyBackend):
    name, runtime, device_class = "acme-0", "acme", "plugin"

class ShadowNumpy(NumpyBackend):
    pass

def discover():
    return [AcmeBackend(), ShadowNumpy()]

def broken():
    raise RuntimeError("plugin exploded")
'''


def test_entry_point_backends(fresh_registry, monkeypatch: pytest.MonkeyPatch, tmp_path):
    (tmp_path / "wb_acme_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint("acme", "wb_acme_plugin:discover", fresh_registry.ENTRY_POINT_GROUP),
           EntryPoint("broken", "wb_acme_plugin:broken", fresh_registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(fresh_registry, "entry_points",
                        lambda group: [ep for ep in eps if ep.group == group])
    found = fresh_registry.all_backends(refresh=True)
    assert found["acme-0"].runtime == "acme"
    assert type(found["numpy"]).__name__ == "NumpyBackend", "a plugin must not shadow a built-in"
    assert {"numba", "torch-cpu", "cupy"} <= set(found), "a broken entry point must not hide the others"
    assert fresh_registry.auto_backend().name == "acme-0"  # plugin class outranks the CPU


def test_import_pulls_in_no_runtime(run_python):
    code = """
import json, sys
import workbench, workbench.store.environment, workbench.cli.cmd_info
import workbench.backends.numba_backend, workbench.backends.torch_backend
import workbench.backends.cupy_backend, workbench.backends.opencl_backend
print(json.dumps(sorted(m for m in ("torch", "cupy", "numba", "llvmlite", "pyopencl") if m in sys.modules)))
"""
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []


def test_a_named_backend_imports_only_its_adapter(run_python):
    """``bench --backends numpy`` must not import pyopencl, torch or cupy to find numpy."""
    code = """
import json, sys
from workbench.backends import registry
assert registry.get("numpy").probe().available
numpy_only = sorted(m for m in sys.modules if m.startswith("workbench.backends.") and m.endswith("_backend"))
registry.get("torch-cpu")
print(json.dumps([numpy_only, [b.name for b in registry.probed_backends()],
                  sorted(m for m in ("torch", "cupy", "numba", "pyopencl") if m in sys.modules)]))
"""
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    numpy_only, probed, runtimes = json.loads(res.stdout.strip().splitlines()[-1])
    assert numpy_only == ["workbench.backends.numpy_backend"]
    assert probed == ["numpy"] and runtimes == []  # looking torch-cpu up is not probing it


def test_lazy_lookup_and_full_discovery_share_objects(fresh_registry):
    numpy = fresh_registry.get("numpy")
    assert fresh_registry.all_backends()["numpy"] is numpy
    assert fresh_registry.get("opencl").runtime == "opencl"  # a runtime's name still means its best device


def test_adapters_found_by_file_name_keep_their_listing_orders(fresh_registry):
    """Backends in ``LISTING_ORDER`` (``workbench info``, the environment record), runtimes by rank (the
    report's environment line), as when the registry listed the modules by hand."""
    from workbench.portable.runtimes import device_runtimes
    from workbench.report.env_summary import key_packages

    modules = [m.rsplit(".", 1)[1] for m in fresh_registry.builtin_modules()]
    assert modules == ["numpy_backend", "numba_backend", "torch_backend", "cupy_backend", "opencl_backend",
                       "vulkan_backend", "triton_backend"]
    assert [rt.name for rt in fresh_registry.runtimes()][:7] == ["numpy", "numba", "torch", "cupy", "opencl",
                                                                 "triton", "wgpu"]
    assert key_packages()[:7] == ["numpy", "numba", "torch", "cupy", "pyopencl", "triton", "wgpu"]
    assert device_runtimes()[:2] == ("cupy", "opencl")
    assert fresh_registry.runtime("wgpu") is fresh_registry.runtime("vulkan")  # no module is named for wgpu

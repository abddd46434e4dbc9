"""The vulkan backend (wgpu): probe, device info, buffers, timing, and every WGSL variant verified.

Here the adapter is lavapipe (Debian mesa-vulkan-drivers, a CPU); without wgpu or an adapter the tests
that need one skip with the probe's reason.
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np
import pytest

from workbench.backends import vulkan_backend
from workbench.backends.base import BackendUnavailable
from workbench.catalog import kernels, variants
from workbench.sweep.verification import verify

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="xdg-"))


@pytest.fixture(scope="module")
def vk():
    b = vulkan_backend.discover()[0]
    if not b.probe().available:
        pytest.skip(f"vulkan unavailable: {b.probe().reason}")
    return b


def test_probe_reason_without_wgpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "wgpu", None)  # import wgpu raises ImportError
    b = vulkan_backend.VulkanBackend()
    p = b.probe()
    assert not p.available and "wgpu is not installed" in p.reason and "vulkan" in p.reason
    with pytest.raises(BackendUnavailable, match="wgpu"):
        b.empty((3,), "float32")


def test_probe_reason_without_adapter(monkeypatch):
    pytest.importorskip("wgpu")
    b = vulkan_backend.VulkanBackend()
    monkeypatch.setattr(vulkan_backend.VulkanBackend, "adapter", property(lambda self: None))
    p = b.probe()
    assert not p.available and "mesa-vulkan-drivers" in p.reason
    assert b.device_class == "cpu"


def test_registered_by_name_and_runtime():
    from workbench.backends import registry

    assert "workbench.backends.vulkan_backend" in registry.builtin_modules()
    assert isinstance(registry.get("vulkan"), vulkan_backend.VulkanBackend)


def test_device_info_and_capabilities(vk):
    info = vk.device_info()
    extra = info.extra
    assert info.name and extra["adapter_type"] in ("CPU", "DiscreteGPU", "IntegratedGPU", "VirtualGPU", "Unknown")
    assert extra["max_workgroup_storage_bytes"] >= 16384 and extra["max_workgroup_invocations"] >= 256
    assert "wgpu" in info.versions
    caps = vk.capabilities()
    assert caps.dtypes == ("float32",) and caps.shared_memory_per_block == extra["max_workgroup_storage_bytes"]
    if extra["adapter_type"] == "CPU":  # lavapipe: a correctness result, ranked as a CPU
        assert vk.device_class == "cpu" and info.kind == "cpu"
    else:
        assert vk.device_class == "opencl-gpu"


def test_buffers_round_trip_and_accounting(vk):
    before = vk.memory().current_bytes
    a = np.arange(7, dtype=np.float32) * 1.5  # 28 bytes: not a multiple of 16
    x = vk.from_numpy(a)
    np.testing.assert_array_equal(vk.to_numpy(x), a)
    m = vk.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert vk.to_numpy(m).shape == (3, 4) and vk.to_numpy(m)[2, 3] == 11
    f = vk.full((5,), "float32", np.nan)
    assert np.isnan(vk.to_numpy(f)).all()
    e = vk.empty((0,), "float32")
    assert vk.to_numpy(e).shape == (0,)
    stats = vk.memory()
    assert stats.current_bytes >= before + 28 + 48 + 20 and "wgpu buffer accounting" in stats.method
    del x, m, f, e
    import gc

    gc.collect()
    assert vk.memory().current_bytes == before
    assert vk.window(vk.empty((8,), "float32"), 2, (4,)) is None  # no guard zones: the harness falls back


def test_timer_kind_and_sample(vk):
    t = vk.timer()
    expected = "wgpu-timestamp" if "timestamp-query-inside-encoders" in vk.device.features else "sync+perf_counter"
    assert t.kind == expected
    x = vk.from_numpy(np.zeros(1 << 16, np.float32))
    s = t.measure(lambda: vk._touch(x))
    assert 0 <= s.device_s < 10 and s.host_s >= 0
    vk.synchronize()


WGSL_CASES = sorted((k, v.name) for k in kernels() for v in variants(k).values() if "wgpu" in v.runtimes)


def test_wgsl_variants_cover_the_issue():
    assert {k for k, _ in WGSL_CASES} >= {"vector_add", "saxpy", "relu", "silu", "gelu_tanh", "softmax",
                                          "rmsnorm", "gemm"}
    assert all(variants(k)[v].dtypes == ("float32",) for k, v in WGSL_CASES)


@pytest.mark.parametrize("kernel, name", WGSL_CASES, ids=[f"{k}-{v}" for k, v in WGSL_CASES])
def test_wgsl_variant_verifies_at_odd_sizes(vk, kernel, name):
    seeds = (0, 1)
    (row,) = verify(backends="vulkan", kernels=kernel, variants=name, dtypes="float32", seeds=seeds,
                    isolation="in-process")
    assert row.status == "ok", f"{row.status}: {row.message} (params {row.params}, seed {row.seed})"
    assert row.trials == len(seeds) * len(kernels()[kernel].sizes["verify"])


def test_wgsl_rejects_other_backends():
    from workbench.catalog.spec import BuildContext, Unsupported

    numpy_backend = __import__("workbench.backends.numpy_backend", fromlist=["discover"]).discover()[0]
    v = variants("vector_add")["wgsl"]
    with pytest.raises(Unsupported, match="vulkan"):
        v.build(BuildContext(numpy_backend, {"n": 4}, "float32"))


def test_wgpu_on_opengl_is_named_so_never_lavapipe(tmp_path):
    """Issue 38: without a Vulkan driver wgpu ran on Mesa's OpenGL llvmpipe, and info and the report said
    "Vulkan on lavapipe". Here the loader is shown no driver (``VK_ICD_FILENAMES``), in a process of its own."""
    pytest.importorskip("wgpu")
    code = ("import json; from workbench.backends.vulkan_backend import VulkanBackend; "
            "from workbench.report.caveats import row_caveats; from workbench.backends.vulkan_backend import "
            "vulkan_drivers; b = VulkanBackend(); p = b.probe()\n"
            "if not p.available: print(json.dumps({'skip': p.reason})); raise SystemExit\n"
            "i = b.device_info(); row = {'backend': 'vulkan', 'runtime': 'wgpu', 'device': i.name}\n"
            "print(json.dumps({'name': i.name, 'api': i.extra['api'], 'lavapipe': i.extra['lavapipe'], "
            "'drivers': vulkan_drivers(), 'caveats': [c['detail'] for c in row_caveats(row)]}))")
    env = {**os.environ, "VK_ICD_FILENAMES": str(tmp_path / "none.json"), "XDG_RUNTIME_DIR": str(tmp_path)}
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in found:
        pytest.skip(f"no OpenGL adapter either: {found['skip']}")
    assert found["api"] != "Vulkan" and found["name"].endswith(f" via {found['api']}")
    assert not found["lavapipe"] and found["drivers"] == []
    assert not any("lavapipe" in c and "Vulkan on" in c for c in found["caveats"])
    if "llvmpipe" in found["name"]:
        assert any(c.startswith(f"wgpu on {found['api']}") for c in found["caveats"])


def test_a_vulkan_adapter_names_its_api(vk):
    info = vk.device_info()
    assert info.extra["api"] == vk.api
    assert info.name.endswith(f" via {vk.api}") == (vk.api != "Vulkan")

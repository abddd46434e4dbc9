"""Every backend that can run on this machine, exercised for real through the Backend contract.

On a CPU-only machine that is numpy, numba, torch-cpu and each OpenCL device
(PoCL); on a GPU machine the same tests cover torch-cuda and cupy too.
"""

from __future__ import annotations

import gc
import statistics
import tracemalloc

import numpy as np
import pytest

from workbench.backends import Backend, registry
from workbench.backends.base import KNOWN_DTYPES, Capabilities, DeviceInfo, MemoryStats

BIG = 16 * 2**20  # float32 elements: 64 MiB


def _available() -> list[str]:
    return [b.name for b in registry.all_backends().values() if b.probe().available]


AVAILABLE = _available()


@pytest.fixture(params=AVAILABLE)
def backend(request: pytest.FixtureRequest) -> Backend:
    return registry.all_backends()[request.param]


def test_cpu_backends_are_all_here():
    """The CPU rungs of the design must run on every machine, this one included."""
    assert {"numpy", "numba", "torch-cpu"} <= set(AVAILABLE)
    pytest.importorskip("pyopencl", reason="pyopencl is not installed here (extra `opencl`): no OpenCL rung to check")
    assert any(name.startswith("opencl-") for name in AVAILABLE), \
        "no OpenCL device (pip install pocl-binary-distribution)"


def test_describes_itself(backend: Backend):
    info, caps = backend.device_info(), backend.capabilities()
    assert isinstance(info, DeviceInfo) and info.name and info.versions
    assert isinstance(caps, Capabilities)
    assert caps.dtypes and set(caps.dtypes) <= set(KNOWN_DTYPES) and "float32" in caps.dtypes
    assert info.total_memory_bytes and info.total_memory_bytes > 2**20


def _values(dtype: str) -> np.ndarray:
    """Exactly representable in every dtype, so round trips compare with ==."""
    return (np.arange(-64, 64, dtype=np.float64).reshape(8, 16) * 0.25).astype(
        np.float32 if dtype == "bfloat16" else dtype)


@pytest.mark.parametrize("dtype", KNOWN_DTYPES)
def test_round_trip(backend: Backend, dtype: str):
    if dtype not in backend.capabilities().dtypes:
        pytest.skip(f"{backend.name} does not claim {dtype}")
    host = _values(dtype)
    x = backend.from_numpy(host)
    if dtype == "bfloat16":  # numpy has no bfloat16: it travels as float32 and is cast on the device
        x = backend.cast(x, "bfloat16")
    back = backend.to_numpy(x)
    assert back.dtype == (np.float32 if dtype == "bfloat16" else np.dtype(dtype))
    assert back.shape == host.shape and np.array_equal(back, host)
    host[0, 0] = 99  # the device copy must not alias the host array
    assert backend.to_numpy(x)[0, 0] == -16


def test_empty_full_and_cast(backend: Backend):
    e = backend.empty((3, 5, 7), "float32")
    assert backend.to_numpy(e).shape == (3, 5, 7) and backend.to_numpy(e).dtype == np.float32
    f = backend.full((4, 3), "float32", float("nan"))
    assert np.isnan(backend.to_numpy(f)).all()
    if "float64" in backend.capabilities().dtypes:
        c = backend.cast(backend.from_numpy(np.full(5, 1.5, np.float32)), "float64")
        assert backend.to_numpy(c).dtype == np.float64 and (backend.to_numpy(c) == 1.5).all()


def _median_device_time(backend: Backend, n: int, repeats: int = 5) -> float:
    x = backend.from_numpy(np.zeros(n, dtype=np.float32))
    timer = backend.timer()
    return statistics.median(timer.measure(lambda: backend._touch(x)).device_s for _ in range(repeats))


def test_timer(backend: Backend):
    timer = backend.timer()
    assert timer.kind in {"sync+perf_counter", "torch-event", "cuda-event", "hip-event", "opencl-profiling",
                          "wgpu-timestamp"}
    if backend.runtime == "opencl":
        assert timer.kind == "opencl-profiling"  # PoCL gives profiling info on markers
    sample = timer.measure(lambda: backend.synchronize())
    assert sample.device_s >= 0 and sample.host_s >= 0
    small, big = _median_device_time(backend, 1024), _median_device_time(backend, BIG)
    assert 0 < small < big, f"{timer.kind}: touching 64 MiB ({big}) should take longer than 4 KiB ({small})"


def test_memory_peak_follows_a_64mb_allocation(backend: Backend):
    was_tracing = tracemalloc.is_tracing()
    try:
        gc.collect()
        backend.reset_peak_memory()
        before = backend.memory()
        assert isinstance(before, MemoryStats) and before.method and before.peak_bytes is not None
        x = backend.full((BIG,), "float32", 1.0)
        backend.synchronize()
        during = backend.memory()
        assert during.peak_bytes >= before.peak_bytes + 60 * 2**20, during
        del x
        gc.collect()
        backend.reset_peak_memory()
        after = backend.memory()
        assert after.peak_bytes <= during.peak_bytes - 60 * 2**20, (during, after)
    finally:
        if not was_tracing and tracemalloc.is_tracing():
            tracemalloc.stop()  # numpy's tracemalloc accounting slows every later test otherwise


def test_flush_cache(backend: Backend):
    backend.flush_cache()
    backend.flush_cache()  # the buffer is reused, not reallocated
    assert getattr(backend, "_flush_buffer", None) is not None


# -- adapter specifics -----------------------------------------------------
def test_torch_cpu_bfloat16_reads_back_as_float32():
    import torch

    b = registry.get("torch-cpu")
    assert {"float16", "bfloat16", "float32", "float64"} <= set(b.capabilities().dtypes)
    x = b.cast(b.from_numpy(np.array([1.0, 1.00390625, 3.0], np.float32)), "bfloat16")
    assert x.dtype == torch.bfloat16 and x.device.type == "cpu" and x.is_contiguous()
    out = b.to_numpy(x)
    assert out.dtype == np.float32 and out.tolist() == [1.0, 1.0, 3.0]  # 1+2^-8 rounds to 1 in bf16
    assert b.device == "cpu" and b.timer().kind == "sync+perf_counter"
    assert "VmHWM" in b.memory().method


def test_numba_claims_no_float16_because_numba_cannot_compute_in_it():
    import numba

    b = registry.get("numba")
    assert "float16" not in b.capabilities().dtypes
    with pytest.raises(Exception):  # noqa: B017 - numba's error type for float16 varies between versions
        numba.njit(lambda a: a[0] + a[1])(np.ones(2, np.float16))
    info = b.device_info()
    assert {"numba", "llvmlite", "threading_layer"} <= set(info.versions)
    assert info.extra["numba_num_threads"] >= 1 and "NRT" in b.memory().method


def test_opencl_contract():
    pytest.importorskip("pyopencl", reason="pyopencl is not installed here (extra `opencl`)")
    import pyopencl as cl
    import pyopencl.array as cla

    devices = [b for b in registry.all_backends().values() if b.runtime == "opencl"]
    assert [b.name for b in devices] == [f"opencl-{i}" for i in range(len(devices))]
    type_order = [(cl.device_type.GPU, "gpu"), (cl.device_type.ACCELERATOR, "accelerator"), (cl.device_type.CPU, "cpu")]
    kinds = [next(k for t, k in type_order if b.device.type & t) for b in devices]
    assert kinds == sorted(kinds, key=["gpu", "accelerator", "cpu"].index), "GPUs must come first"
    for b in devices:
        assert isinstance(b.device, cl.Device) and isinstance(b.ctx, cl.Context)
        assert isinstance(b.queue, cl.CommandQueue)
        assert b.queue.properties & cl.command_queue_properties.PROFILING_ENABLE
        if b.compile_error:  # a device that lists itself but cannot build kernels is unavailable, and says why
            p = b.probe()
            assert not p.available and b.compile_error in p.reason
            assert b.name not in registry.available_backends()  # so it is never chosen over one that builds
            continue
        caps, ext = b.capabilities(), b.device.extensions.split()
        assert ("float16" in caps.dtypes) == ("cl_khr_fp16" in ext)
        assert ("float64" in caps.dtypes) == ("cl_khr_fp64" in ext)
        assert "bfloat16" not in caps.dtypes
        assert caps.shared_memory_per_block == b.device.local_mem_size
        assert caps.max_threads_per_block == b.device.max_work_group_size
        assert caps.compiles_device_code
        # when it claims it can, a kernel really builds and runs on its queue
        x = b.empty((64,), "float32")
        src = "__kernel void one(__global float *x) { x[get_global_id(0)] = 1.0f; }"
        cl.Program(b.ctx, src).build().one(b.queue, (64,), None, x.data)
        assert (b.to_numpy(x) == 1).all()
        assert isinstance(b.empty((4,), "float32"), cla.Array)
        if b.device.type & cl.device_type.CPU:
            assert b.device_class == "cpu" and b.priority == 100
        assert b.device_info().last_level_cache_bytes == b.device.global_mem_cache_size

"""OpenCL through PyOpenCL: one backend per device, the CPU included through PoCL.

This is where portable device kernels run on a machine without a GPU, so the
attributes the portable-kernel compiler uses are a contract: ``ctx``
(``pyopencl.Context``), ``queue`` (a ``CommandQueue`` with profiling enabled)
and ``device`` (``pyopencl.Device``). Context and queue are made on first use.

A device can list itself and still fail every build (PoCL 3.0's LLVM 14
answers ``unknown target CPU 'generic'`` on CPUs newer than it knows). Every
workbench variant on OpenCL is a kernel build, so the probe builds a one-line
kernel, and a device that cannot build is unavailable: its probe reason (and
``compile_error``) carries the compiler's first error line.

Memory is accounted, not measured: the bytes of every array allocated through
this backend, released when the array object is garbage-collected. Views
share their base's buffer and are not counted twice; memory a kernel's host
code allocates behind our back is not seen.
"""

from __future__ import annotations

import importlib
import os
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.backends import registry
from workbench.backends.base import (
    Backend,
    BackendUnavailable,
    Capabilities,
    DeviceInfo,
    MemoryStats,
    Probe,
    Sample,
    SyncWallTimer,
    Timer,
)
from workbench.backends.memory import MemoryMeter
from workbench.backends.opencl_portable import DEVICE_CODE
from workbench.backends.runtime import Runtime

INSTALL_HINT = "pip install pyopencl pocl-binary-distribution mako"
_PROBE_SOURCE = "__kernel void wb_probe(__global float *x) { x[get_global_id(0)] = 1.0f; }"


class BufferAccountMemory(MemoryMeter):
    """Live and peak bytes of the arrays this backend handed out (OpenCL has no allocator statistics)."""

    method = ("opencl buffer accounting (bytes of arrays allocated through this backend, "
              "released when the array is garbage-collected)")

    def __init__(self) -> None:
        self.current = 0
        self.peak = 0

    def add(self, array: Any) -> Any:
        buf = getattr(array, "base_data", None)
        nbytes = int(buf.size) if buf is not None else 0
        if nbytes:
            self.current += nbytes
            self.peak = max(self.peak, self.current)
            weakref.finalize(array, self._release, nbytes)
        return array

    def _release(self, nbytes: int) -> None:
        self.current -= nbytes

    def reset(self) -> None:
        self.peak = self.current

    def stats(self) -> MemoryStats:
        return MemoryStats(self.current, self.peak, self.method)


class MarkerTimer(Timer):
    """Profiling timestamps of markers enqueued before and after the call (in-order queue)."""

    kind = "opencl-profiling"

    def __init__(self, queue: Any):
        self._queue = queue

    def measure(self, fn: Callable[[], Any]) -> Sample:
        cl = _cl()
        q = self._queue
        q.finish()
        before = cl.enqueue_marker(q)
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        after = cl.enqueue_marker(q)
        after.wait()
        # `before` completes once the idle queue reaches it; `after` once fn's commands are done.
        return Sample(device_s=(after.profile.end - before.profile.end) * 1e-9, host_s=t1 - t0)


#: PoCL's CPU driver with each of its threads bound to its own core, unless the user chose: unbound, the
#: OpenCL cells of two back-to-back quick runs (opencl alone, idle 2-core VM, 2026-12-06) agreed within 5% on
#: 14% of the cells, with 80% of them noisy; bound, on 52%, with 16% noisy (round max/min p90 1.95 -> 1.26).
POCL_AFFINITY = "POCL_AFFINITY"


class OpenCLBackend(Backend):
    runtime = "opencl"

    @property
    def worker_env(self) -> dict[str, str]:  # type: ignore[override]
        """PoCL's threads bound to cores (:data:`POCL_AFFINITY`), unless this environment says otherwise."""
        return {} if POCL_AFFINITY in os.environ else {POCL_AFFINITY: "1"}

    def __init__(self, index: int, device: Any):
        self.name = f"opencl-{index}"
        #: The ``pyopencl.Device`` this backend runs on.
        self.device = device
        #: First error line of the probe build, or None when OpenCL C kernels build on this device.
        self.compile_error: str | None = None
        self._ctx: Any = None
        self._queue: Any = None
        self._markers_profile: bool | None = None
        self.meter = BufferAccountMemory()

    @property
    def device_class(self) -> str:  # type: ignore[override]
        return {"gpu": "opencl-gpu", "accelerator": "opencl-accelerator", "cpu": "cpu"}[_kind(self.device)]

    @property
    def ctx(self) -> Any:
        """The ``pyopencl.Context`` on :attr:`device`, created on first use."""
        if self._ctx is None:
            self._ctx = _cl().Context([self.device])
        return self._ctx

    @property
    def queue(self) -> Any:
        """An in-order ``pyopencl.CommandQueue`` with ``PROFILING_ENABLE``, created on first use."""
        if self._queue is None:
            cl = _cl()
            self._queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        return self._queue

    # -- discovery -------------------------------------------------------
    def _probe_uncached(self) -> Probe:
        cl = _cl()
        try:
            if not self.device.available:
                return Probe.missing(f"OpenCL device {self.device.name.strip()!r} reports itself unavailable")
            self.queue  # noqa: B018 - creating context and queue is the real test
        except Exception as exc:  # noqa: BLE001 - any driver error means the device cannot be opened; it becomes the reason
            return Probe.missing(f"cannot open OpenCL device {self.device.name.strip()!r}: {exc}")
        try:
            cl.Program(self.ctx, _PROBE_SOURCE).build()
        except Exception as exc:  # noqa: BLE001 - a failed build raises per driver; its message becomes the reason
            self.compile_error = _build_error(str(exc))
            return Probe.missing(f"OpenCL C kernels do not build on this device: {self.compile_error}")
        return Probe.ok()

    def device_info(self) -> DeviceInfo:
        self.require()
        cl, d = _cl(), self.device
        versions = {"pyopencl": cl.VERSION_TEXT, "platform": d.platform.version.strip(),
                    "driver": d.driver_version.strip(), "opencl_c": d.opencl_c_version.strip(),
                    "device": d.version.strip()}
        extra = {"platform": d.platform.name.strip(), "extensions": sorted(d.extensions.split()),
                 "max_mem_alloc_bytes": d.max_mem_alloc_size}
        return DeviceInfo(name=d.name.strip(), vendor=d.vendor.strip(), kind=_kind(d),
                          total_memory_bytes=d.global_mem_size, compute_units=d.max_compute_units,
                          clock_mhz=float(d.max_clock_frequency),
                          last_level_cache_bytes=d.global_mem_cache_size or None,
                          versions=versions, extra=extra)

    def capabilities(self) -> Capabilities:
        self.require()
        d = self.device
        ext = set(d.extensions.split())
        dtypes = (("float16",) if "cl_khr_fp16" in ext else ()) + ("float32",) \
            + (("float64",) if "cl_khr_fp64" in ext else ())
        return Capabilities(dtypes=dtypes, warp_size=self._warp_size(), shared_memory_per_block=d.local_mem_size,
                            max_threads_per_block=d.max_work_group_size, device_events=True,
                            compiles_device_code=True)

    def _warp_size(self) -> int:
        """Vendor warp/wavefront width, else the preferred work-group size multiple (OpenCL 3.0 or a kernel's)."""
        cl = _cl()
        for attr in ("warp_size_nv", "wavefront_width_amd", "preferred_work_group_size_multiple"):
            try:
                return int(getattr(self.device, attr))
            except (cl.Error, AttributeError):
                continue
        kernel = cl.Program(self.ctx, _PROBE_SOURCE).build().wb_probe
        return int(kernel.get_work_group_info(cl.kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                              self.device))

    # -- arrays ----------------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> Any:
        self.require()
        cla = importlib.import_module("pyopencl.array")
        return self.meter.add(cla.to_device(self.queue, np.ascontiguousarray(a)))

    def to_numpy(self, x: Any) -> np.ndarray:
        self.require()
        return x.get(queue=self.queue)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        self.require()
        if dtype == "bfloat16":
            raise ValueError("OpenCL has no bfloat16 type")
        cla = importlib.import_module("pyopencl.array")
        return self.meter.add(cla.empty(self.queue, tuple(shape), np.dtype(dtype)))

    def window(self, buf: Any, start: int, shape: tuple[int, ...]) -> Any | None:
        """A sub-buffer of ``buf`` (``Buffer.get_sub_region``): kernels take ``Array.data``, which pyopencl
        refuses for a sliced array, but a sub-buffer is a buffer of its own that shares ``buf``'s memory, so a
        write past its end lands in ``buf``'s guard zone. None when ``start`` is not aligned as the device
        requires (``MEM_BASE_ADDR_ALIGN``)."""
        self.require()
        cla = importlib.import_module("pyopencl.array")
        itemsize = buf.dtype.itemsize
        origin = buf.offset + start * itemsize
        align = max(1, int(self.device.mem_base_addr_align) // 8)
        if origin % align:
            return None
        n = int(np.prod(shape))
        sub = buf.base_data.get_sub_region(origin, n * itemsize)
        return cla.Array(self.queue, tuple(shape), buf.dtype, data=sub)

    def cast(self, x: Any, dtype: str) -> Any:
        """Through the host: pyopencl's ``astype`` would build a kernel for each pair of dtypes."""
        if dtype == "bfloat16":
            raise NotImplementedError("OpenCL has no bfloat16 type")
        return self.from_numpy(self.to_numpy(x).astype(dtype))

    # -- execution -------------------------------------------------------
    def synchronize(self) -> None:
        self.require()
        self.queue.finish()

    def timer(self) -> Timer:
        self.require()
        if self._markers_profile is None:
            self._markers_profile = self._check_marker_profiling()
        return MarkerTimer(self.queue) if self._markers_profile else SyncWallTimer(self.synchronize)

    def _check_marker_profiling(self) -> bool:
        cl = _cl()
        try:
            before, after = cl.enqueue_marker(self.queue), cl.enqueue_marker(self.queue)
            after.wait()
            return after.profile.end >= before.profile.end > 0
        except cl.Error:  # PROFILING_INFO_NOT_AVAILABLE on markers: fall back to sync + wall clock
            return False

    # -- caches ----------------------------------------------------------
    def _touch(self, buf: Any) -> None:
        """Overwrite the whole flush buffer with a runtime fill (``+=`` would build a kernel)."""
        _cl().enqueue_fill_buffer(self.queue, buf.base_data, np.float32(1), buf.offset, buf.nbytes)


class OpenCLUnavailable(Backend):
    """Stands in for OpenCL when there is no pyopencl, platform or device, so the reason is listed."""

    name = "opencl"
    runtime = "opencl"
    device_class = "opencl-gpu"

    def __init__(self, reason: str):
        self._reason = reason

    def probe(self) -> Probe:
        return Probe.missing(self._reason)

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise BackendUnavailable(f"backend {self.name!r} is unavailable: {self._reason}")

    device_info = capabilities = from_numpy = to_numpy = empty = _fail  # type: ignore[assignment]
    synchronize = memory = reset_peak_memory = _fail  # type: ignore[assignment]


def _cl() -> Any:
    return importlib.import_module("pyopencl")


def _kind(device: Any) -> str:
    t = _cl().device_type
    if device.type & t.GPU:
        return "gpu"
    return "cpu" if device.type & t.CPU else "accelerator"


def _build_error(message: str) -> str:
    """The compiler's first ``error:`` line, with the known PoCL cause spelled out."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    first = next((ln for ln in lines if ln.startswith("error:")), lines[0] if lines else "build failed")
    if "unknown target CPU" in first:
        first += " (PoCL's bundled LLVM does not know this CPU model; a newer PoCL build is needed)"
    return first


def discover() -> list[Backend]:
    """One backend per device, GPUs first, then accelerators, then CPUs; never raises."""
    try:
        cl = importlib.import_module("pyopencl")
    except ImportError:
        return [OpenCLUnavailable(f"pyopencl is not installed: {INSTALL_HINT}")]
    except Exception as exc:  # noqa: BLE001 - a broken install must be listed with its reason, not crash discovery
        return [OpenCLUnavailable(f"pyopencl failed to import ({type(exc).__name__}: {exc}); {INSTALL_HINT}")]
    try:
        platforms = cl.get_platforms()
    except Exception as exc:  # noqa: BLE001 - no ICD loader entry: PLATFORM_NOT_FOUND_KHR
        return [OpenCLUnavailable(f"no OpenCL platform ({exc}); for a CPU device: {INSTALL_HINT}")]
    devices: list[Any] = []
    for platform in platforms:
        try:
            devices.extend(platform.get_devices())
        except Exception:  # noqa: BLE001 - a platform with no devices raises DEVICE_NOT_FOUND
            continue
    if not devices:
        return [OpenCLUnavailable(f"OpenCL platform(s) without devices; for a CPU device: {INSTALL_HINT}")]
    rank = {"gpu": 0, "accelerator": 1, "cpu": 2}
    devices.sort(key=lambda d: rank[_kind(d)])
    return [OpenCLBackend(i, d) for i, d in enumerate(devices)]


def backend_of(x: Any) -> str | None:
    """The ``opencl-N`` backend whose device holds ``x`` (an Array's queue device, or its context's); None for
    a PyOpenCL object that is no array or buffer."""
    if type(x).__name__ not in ("Array", "Buffer"):
        return None
    queue = getattr(x, "queue", None)
    device = getattr(queue, "device", None) if queue is not None else None
    if device is None:
        devices = getattr(getattr(x, "context", None), "devices", None) or []
        device = devices[0] if devices else None
    for b in registry.all_backends().values():
        if b.runtime == "opencl" and device is not None and getattr(b, "device", None) == device:
            return b.name
    return "opencl"


#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 50
RUNTIMES = (Runtime(
    "opencl", rank=50, modules=("pyopencl",), marker="D", guards_outputs=True, distribution="pyopencl",
    headline_package="pyopencl", key_versions=("pyopencl", "driver", "opencl_c"), device_code=DEVICE_CODE,
    packages=("pyopencl", "pocl-binary-distribution", "mako"), array_backend=backend_of,
    mode_meanings={"graph": "a pre-planned launch list: kernels built, arguments bound and buffers allocated once "
                            "per shape, all launches enqueued with no host synchronisation between them and one "
                            "finish at the end"}),)

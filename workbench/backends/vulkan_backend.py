"""Vulkan (and the other native GPU APIs) through wgpu: WGSL compute shaders on one adapter.

The backend is named ``vulkan``; its runtime (what WGSL variants declare) is ``wgpu``, since the same
shaders run wherever wgpu finds an adapter (Vulkan here; Metal or D3D12 elsewhere, recorded in
``device_info().extra["backend"]``). wgpu is imported lazily: the core workbench does not need it.

Without a GPU, Debian's ``mesa-vulkan-drivers`` give lavapipe, a Vulkan device named ``llvmpipe`` of
type CPU. Its rows are correctness results, not GPU speed (like PoCL's): its device class is ``cpu``.
Without that package wgpu falls back to Mesa's OpenGL on the same ``llvmpipe``: not Vulkan, and said so
(``extra["api"]``, and the device name ends ``via OpenGL``), so it is never labelled lavapipe.
A hardware adapter (discrete or integrated GPU, preferred by ``power_preference="high-performance"``)
ranks like an OpenCL GPU.

Device arrays are :class:`WgpuArray` (a ``GPUBuffer`` with a shape and a dtype). Memory is accounted like
OpenCL's: the bytes of the buffers this backend allocated, released when the array is garbage-collected.
Timing uses timestamp queries written into the queue before and after the call where the adapter has
``timestamp-query-inside-encoders`` (timer kind ``wgpu-timestamp``), else synchronize + perf_counter.

The device is created on first use in the process that uses it, so a bench worker opens its own.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import stat
import struct
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.backends.base import (
    Backend,
    BackendUnavailable,
    Capabilities,
    DeviceInfo,
    Probe,
    Sample,
    SyncWallTimer,
    Timer,
)
from workbench.backends.opencl_backend import BufferAccountMemory
from workbench.backends.runtime import Runtime
from workbench.catalog.spec import Unsupported
from workbench.core.regular_files import read_regular_text

if TYPE_CHECKING:
    from workbench.catalog.spec import BuildContext, DeviceArrays, KernelCall, KernelSpec

INSTALL_HINT = "pip install 'kernel-workbench[vulkan]' (wgpu)"
#: wgpu's name (``adapter.info["backend_type"]``) of the API this backend is named after.
VULKAN_API = "Vulkan"
NO_ADAPTER = "no Vulkan adapter (install mesa-vulkan-drivers for lavapipe, or a GPU's Vulkan driver)"
#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 60
#: The runtime is wgpu; its backend family, ``vulkan``.
#: Where the Vulkan loader finds driver manifests (besides ``$XDG_DATA_DIRS``/vulkan/icd.d).
VULKAN_ICD_DIRS = ("/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d")


def vulkan_drivers() -> list[str]:
    """The Vulkan driver manifests the loader would read (``VK_DRIVER_FILES`` / ``VK_ICD_FILENAMES`` where set,
    else the standard folders): names only, nothing loaded. Part of the environment id: without a driver wgpu
    runs on OpenGL, and a run after ``apt-get install mesa-vulkan-drivers`` ran on Vulkan under the same id,
    which ``compare`` then set against the OpenGL one."""
    explicit = os.environ.get("VK_DRIVER_FILES") or os.environ.get("VK_ICD_FILENAMES")
    if explicit is not None:
        return sorted({Path(p).name for p in explicit.split(os.pathsep) if p and Path(p).is_file()})
    data_dirs = (os.environ.get("XDG_DATA_DIRS") or "").split(os.pathsep)
    dirs = [*VULKAN_ICD_DIRS, *(str(Path(d) / "vulkan" / "icd.d") for d in data_dirs if d)]
    found = set()
    for d in dirs:
        try:
            found.update(p.name for p in Path(d).glob("*.json"))
        except OSError:
            continue
    return sorted(found)


RUNTIMES = (Runtime("wgpu", rank=70, families=("vulkan",), modules=("wgpu",), marker="p", headline_package="wgpu",
                    drivers=vulkan_drivers),)
#: Storage buffers are read and written by shaders and copied to and from the host.
_STORAGE = 0x80 | 0x4 | 0x8  # STORAGE | COPY_SRC | COPY_DST
#: The limits a workbench device asks for: the adapter's own (wgpu's defaults are much lower).
_LIMITS = ("max-buffer-size", "max-storage-buffer-binding-size", "max-compute-workgroup-storage-size",
           "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
           "max-compute-workgroup-size-y", "max-compute-workgroups-per-dimension",
           "max-storage-buffers-per-shader-stage")


class WgpuArray:
    """A device array: a ``GPUBuffer`` holding ``prod(shape)`` elements of ``dtype``, C order."""

    __slots__ = ("buffer", "shape", "dtype", "__weakref__")

    def __init__(self, buffer: Any, shape: tuple[int, ...], dtype: np.dtype):
        self.buffer, self.shape, self.dtype = buffer, tuple(int(d) for d in shape), np.dtype(dtype)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"WgpuArray(shape={self.shape}, dtype={self.dtype})"


class WgpuBufferMemory(BufferAccountMemory):
    method = ("wgpu buffer accounting (bytes of buffers allocated through this backend, "
              "released when the array is garbage-collected)")

    def add(self, array: Any) -> Any:
        import weakref

        nbytes = int(array.buffer.size)
        self.current += nbytes
        self.peak = max(self.peak, self.current)
        weakref.finalize(array, self._release, nbytes)
        return array


class TimestampTimer(Timer):
    """Timestamps written into the queue before and after the call's submissions (resolved, then read)."""

    kind = "wgpu-timestamp"

    def __init__(self, backend: VulkanBackend):
        wgpu = _wgpu()
        self._b = backend
        dev = backend.device
        self._qs = dev.create_query_set(type="timestamp", count=2)
        self._resolve = dev.create_buffer(size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        self._period = backend.timestamp_period_ns()

    def _stamp(self, index: int, resolve: bool = False) -> None:
        extras = importlib.import_module("wgpu.backends.wgpu_native.extras")
        enc = self._b.device.create_command_encoder()
        extras.write_timestamp(enc, self._qs, index)
        if resolve:
            enc.resolve_query_set(self._qs, 0, 2, self._resolve, 0)
        self._b.device.queue.submit([enc.finish()])

    def measure(self, fn: Callable[[], Any]) -> Sample:
        self._b.synchronize()
        self._stamp(0)
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        self._stamp(1, resolve=True)
        start, end = np.frombuffer(self._b.device.queue.read_buffer(self._resolve), dtype=np.uint64)
        return Sample(device_s=float(end - start) * self._period * 1e-9, host_s=t1 - t0)


class VulkanBackend(Backend):
    name = "vulkan"
    runtime = "wgpu"

    def __init__(self) -> None:
        self.meter = WgpuBufferMemory()
        self._adapter: Any = None
        self._device: Any = None
        self._pipelines: dict[tuple[str, str], Any] = {}
        self._timestamps: bool | None = None
        self._sync_buffer: Any = None

    # -- discovery -------------------------------------------------------
    @property
    def adapter(self) -> Any:
        """The ``GPUAdapter`` (a hardware GPU preferred), requested on first use; None when there is none."""
        if self._adapter is None:
            wgpu = _wgpu()
            _load_triton_first()
            self._adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        return self._adapter

    @property
    def device(self) -> Any:
        """The ``GPUDevice``, created on first use with the adapter's limits and timestamp features."""
        if self._device is None:
            a = self.adapter
            if a is None:
                raise BackendUnavailable(f"backend {self.name!r} is unavailable: {NO_ADAPTER}")
            feats = [f for f in ("timestamp-query", "timestamp-query-inside-encoders") if f in a.features]
            limits = {k: a.limits[k] for k in _LIMITS if k in a.limits}
            self._device = a.request_device_sync(required_features=feats, required_limits=limits)
        return self._device

    def _probe_uncached(self) -> Probe:
        try:
            _wgpu()
        except ImportError:
            return Probe.missing(f"wgpu is not installed: {INSTALL_HINT}")
        except Exception as exc:  # noqa: BLE001 - a broken install (no native library) is listed with its reason
            return Probe.missing(f"wgpu failed to import ({type(exc).__name__}: {exc}); {INSTALL_HINT}")
        try:
            if self.adapter is None:
                return Probe.missing(NO_ADAPTER)
            self.device  # noqa: B018 - creating the device is the real test
        except Exception as exc:  # noqa: BLE001 - any driver error means no usable adapter; it becomes the reason
            return Probe.missing(f"{NO_ADAPTER}: {type(exc).__name__}: {exc}")
        return Probe.ok()

    @property
    def adapter_type(self) -> str:
        """``CPU``, ``DiscreteGPU``, ``IntegratedGPU``, ``VirtualGPU`` or ``Unknown``."""
        a = self.adapter if self.probe().available else None
        return str(a.info.get("adapter_type", "Unknown")) if a is not None else "Unknown"

    @property
    def api(self) -> str:
        """The graphics API wgpu runs on: ``Vulkan``, or where no Vulkan driver is installed ``OpenGL`` (wgpu's
        fallback: a machine without mesa-vulkan-drivers runs WGSL through Mesa's OpenGL), ``Metal``, ``D3D12``."""
        a = self.adapter if self.probe().available else None
        return str(a.info.get("backend_type") or "unknown") if a is not None else "unknown"

    @property
    def device_class(self) -> str:  # type: ignore[override]
        return "cpu" if self.adapter_type in ("CPU", "Unknown") else "opencl-gpu"

    def device_info(self) -> DeviceInfo:
        self.require()
        wgpu, a = _wgpu(), self.adapter
        info = dict(a.info)
        limits = dict(self.device.limits)
        subgroups = {k: info[k] for k in info if "group_m" in k and k.endswith("_size")}
        kind = {"CPU": "cpu", "DiscreteGPU": "gpu", "IntegratedGPU": "gpu", "VirtualGPU": "gpu"}.get(
            info.get("adapter_type", ""), "accelerator")
        api = self.api
        extra = {"adapter_type": info.get("adapter_type"), "backend": api, "api": api,
                 "description": info.get("description"),
                 # lavapipe is Mesa's *Vulkan* driver on llvmpipe; wgpu on Mesa's OpenGL llvmpipe is not it
                 "lavapipe": api == VULKAN_API and "llvmpipe" in str(info.get("device", "")).lower(),
                 "max_workgroup_storage_bytes": limits.get("max-compute-workgroup-storage-size"),
                 "max_workgroup_invocations": limits.get("max-compute-invocations-per-workgroup"),
                 "max_storage_buffer_binding_bytes": limits.get("max-storage-buffer-binding-size"),
                 "max_buffer_bytes": limits.get("max-buffer-size"),
                 "subgroup_min_size": next((v for k, v in subgroups.items() if "min" in k), None),
                 "subgroup_max_size": next((v for k, v in subgroups.items() if "max" in k), None),
                 "features": sorted(str(f) for f in a.features),
                 "timer": self.timer().kind}
        # wgpu reports no memory size: a CPU adapter uses host memory; for a GPU the largest buffer it
        # allows is the lower bound we know (extra["total_memory_source"] says which).
        if kind == "cpu":
            import psutil

            total, extra["total_memory_source"] = int(psutil.virtual_memory().total), "host memory"
        else:
            total, extra["total_memory_source"] = limits.get("max-buffer-size"), "max buffer size (a lower bound)"
        return DeviceInfo(name=device_name(str(info.get("device") or info.get("description") or "wgpu adapter"), api),
                          vendor=str(info.get("vendor") or "unknown"), kind=kind, total_memory_bytes=total,
                          versions={"wgpu": wgpu.__version__, "driver": str(info.get("description", ""))},
                          extra=extra)

    def capabilities(self) -> Capabilities:
        self.require()
        lim = self.device.limits
        info = dict(self.adapter.info)
        sizes = {v for k, v in info.items() if "group_m" in k and k.endswith("_size")}
        warp = sizes.pop() if len(sizes) == 1 else None  # a range (lavapipe: 4..128) names no one width
        return Capabilities(dtypes=("float32",), warp_size=int(warp) if warp else None,
                            shared_memory_per_block=lim.get("max-compute-workgroup-storage-size"),
                            max_threads_per_block=lim.get("max-compute-invocations-per-workgroup"),
                            device_events=self._has_timestamps(), compiles_device_code=False)

    # -- arrays ----------------------------------------------------------
    def _buffer(self, nbytes: int, data: bytes | None = None) -> Any:
        size = max(4, -(-nbytes // 4) * 4)  # wgpu: no empty buffers, sizes a multiple of 4
        if data is not None:
            if len(data) != size:
                data = bytes(data) + b"\0" * (size - len(data))
            return self.device.create_buffer_with_data(data=data, usage=_STORAGE)
        return self.device.create_buffer(size=size, usage=_STORAGE)

    def from_numpy(self, a: np.ndarray) -> WgpuArray:
        self.require()
        a = np.ascontiguousarray(a)
        return self.meter.add(WgpuArray(self._buffer(a.nbytes, a.tobytes()), a.shape, a.dtype))

    def to_numpy(self, x: WgpuArray) -> np.ndarray:
        self.require()
        raw = self.device.queue.read_buffer(x.buffer)
        return np.frombuffer(raw, dtype=x.dtype, count=x.size).reshape(x.shape).copy()

    def empty(self, shape: tuple[int, ...], dtype: str) -> WgpuArray:
        self.require()
        if dtype == "bfloat16":
            raise ValueError("wgpu has no bfloat16 type")
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        return self.meter.add(WgpuArray(self._buffer(n * dt.itemsize), tuple(shape), dt))

    def window(self, buf: Any, start: int, shape: tuple[int, ...]) -> Any | None:
        """None: a binding offset must be aligned (``min-storage-buffer-offset-alignment``) and our kernels
        bind whole buffers, so outputs get no guard zones."""
        return None

    def cast(self, x: WgpuArray, dtype: str) -> WgpuArray:
        if dtype == "bfloat16":
            raise NotImplementedError("wgpu has no bfloat16 type")
        return self.from_numpy(self.to_numpy(x).astype(dtype))

    # -- execution -------------------------------------------------------
    def synchronize(self) -> None:
        """Waits for all submitted work: reading a 4-byte buffer back maps it after everything queued before
        (wgpu 0.32's ``on_submitted_work_done_sync`` fails on a callback signature mismatch)."""
        self.require()
        if self._sync_buffer is None:
            self._sync_buffer = self.device.create_buffer(size=4, usage=_STORAGE)
        self.device.queue.read_buffer(self._sync_buffer)

    def _has_timestamps(self) -> bool:
        if self._timestamps is None:
            self._timestamps = {"timestamp-query", "timestamp-query-inside-encoders"} <= set(self.device.features)
        return self._timestamps

    def timestamp_period_ns(self) -> float:
        """Nanoseconds per timestamp tick (wgpu-native's ``wgpuQueueGetTimestampPeriod``; 1 where unknown)."""
        try:
            extras = importlib.import_module("wgpu.backends.wgpu_native.extras")
            return float(extras.lib.wgpuQueueGetTimestampPeriod(self.device.queue._internal)) or 1.0
        except Exception:  # noqa: BLE001 - a private handle that moved: assume nanoseconds, as wgpu normalises
            return 1.0

    def timer(self) -> Timer:
        self.require()
        return TimestampTimer(self) if self._has_timestamps() else SyncWallTimer(self.synchronize)

    def _touch(self, buf: WgpuArray) -> None:
        enc = self.device.create_command_encoder()
        enc.clear_buffer(buf.buffer)
        self.device.queue.submit([enc.finish()])

    # -- kernels ---------------------------------------------------------
    def pipeline(self, source: str, entry: str = "main") -> Any:
        """A compute pipeline for WGSL ``source`` (auto layout), compiled once per process."""
        key = (source, entry)
        if key not in self._pipelines:
            dev = self.device
            module = dev.create_shader_module(code=source)
            self._pipelines[key] = dev.create_compute_pipeline(layout="auto",
                                                               compute={"module": module, "entry_point": entry})
        return self._pipelines[key]

    def uniform(self, values: Sequence[tuple[str, float]]) -> Any:
        """A uniform buffer of ``(format, value)`` pairs (``"I"`` u32, ``"f"`` f32), padded to 16 bytes."""
        data = b"".join(struct.pack("<" + f, v) for f, v in values)
        data += b"\0" * (-len(data) % 16 or (16 if not data else 0))
        wgpu = _wgpu()
        return self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)

    def dispatch(self, pipeline: Any, buffers: Sequence[Any], groups: tuple[int, int, int]) -> None:
        """One compute pass: binding ``i`` of group 0 is ``buffers[i]`` (a WgpuArray or a GPUBuffer)."""
        dev = self.device
        entries = [{"binding": i, "resource": {"buffer": getattr(b, "buffer", b), "offset": 0,
                                               "size": getattr(b, "buffer", b).size}}
                   for i, b in enumerate(buffers)]
        bind = dev.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, bind)
        cp.dispatch_workgroups(*groups)
        cp.end()
        dev.queue.submit([enc.finish()])


def device_name(adapter: str, api: str) -> str:
    """The device a row names: the adapter, and the API where it is not Vulkan (``llvmpipe (LLVM 15.0.6, 256
    bits) via OpenGL``), so rows, ``info``, reports and ``compare`` tell an OpenGL run from a Vulkan one on the
    same adapter."""
    return adapter if api == VULKAN_API else f"{adapter} via {api}"


def wgsl_call(ctx: BuildContext, spec: KernelSpec, source: Path | str, bindings: Sequence[str],
              groups: Callable[[dict[str, int], int], tuple[int, int, int]],
              uniforms: Callable[[dict[str, int]], Sequence[tuple[str, float]]] | None = None,
              entry: str = "main") -> KernelCall:
    """``run(inputs, outputs)`` dispatching WGSL ``source`` with ``bindings`` (spec array names, in binding
    order; a uniform buffer from ``uniforms(params)`` follows them) over ``groups(params, max_groups)``."""
    b = ctx.backend
    if not isinstance(b, VulkanBackend):
        raise Unsupported(f"WGSL kernels run on the vulkan backend, not {b.name}")
    p = ctx.params
    limit = int(b.device.limits.get("max-storage-buffer-binding-size", 2**27))
    out_bytes = {k: int(np.prod(v, dtype=np.int64)) * 4 for k, v in spec.output_shapes(p).items()}
    if max(out_bytes.values()) > limit:
        raise Unsupported(f"an output of {max(out_bytes.values())} bytes exceeds this adapter's storage "
                          f"binding limit ({limit} bytes)")
    # Inputs are bounded by the compulsory traffic less the outputs; only when that bound passes the limit
    # are the input buffers checked at run time.
    check_inputs = spec.bytes_moved(p, 4) - sum(out_bytes.values()) > limit
    max_groups = int(b.device.limits.get("max-compute-workgroups-per-dimension", 65535))
    grid = tuple(int(g) for g in groups(p, max_groups))
    if any(g > max_groups for g in grid):
        raise Unsupported(f"dispatch {grid} exceeds {max_groups} workgroups per dimension")
    is_file = isinstance(source, Path) or str(source).endswith(".wgsl")
    text = read_regular_text(source, what="WGSL source") if is_file else str(source)
    pipe = b.pipeline(text, entry)
    extra = [b.uniform(uniforms(p))] if uniforms is not None else []
    outputs = set(spec.output_shapes(p))
    picks = tuple((n in outputs, n) for n in bindings)

    def run(inp: DeviceArrays, out: DeviceArrays) -> None:
        if check_inputs and any(inp[n].buffer.size > limit for is_out, n in picks if not is_out):
            raise Unsupported(f"an input exceeds this adapter's storage binding limit ({limit} bytes)")
        b.dispatch(pipe, [(out if is_out else inp)[n] for is_out, n in picks] + extra, grid)
    return run


def _load_triton_first() -> None:
    """Import triton (where installed) before an adapter loads lavapipe's LLVM into this process.

    Importing triton's LLVM *after* a lavapipe (Mesa, LLVM) adapter is open segfaults the process (triton 3.9,
    wgpu 0.32, Mesa 22.3; seen 2026-11-22), and triton is imported behind the user's back: ``torch.compile``
    imports it whenever it is installed. The other order works. So a process that opens an adapter takes
    triton first: a notebook that lists its backends and later calls ``torch.compile`` keeps its kernel. Triton
    reads ``TRITON_INTERPRET`` when a kernel is defined, not when it is imported, so the interpreter backend
    still works in this process."""
    import importlib.util
    import sys

    if "triton" in sys.modules or os.environ.get("WORKBENCH_IN_WORKER") == "1":
        return  # a worker process runs only its backend's WGSL: no torch.compile will load triton's LLVM there
    try:
        if importlib.util.find_spec("triton") is not None:
            importlib.import_module("triton")
    except Exception:  # noqa: BLE001 - a broken triton must not hide the Vulkan adapter; it fails where used
        pass


def _wgpu() -> Any:
    _quiet_xdg_runtime_dir()
    return importlib.import_module("wgpu")


def _quiet_xdg_runtime_dir() -> None:
    """Mesa's Vulkan loader prints "error: XDG_RUNTIME_DIR is invalid or not set" on every adapter query
    when the variable is missing (containers, CI): point it at a private folder first. One folder per user,
    reused by every process (``workbench-xdg-<uid>``; a new temporary folder per process left one empty
    folder behind per Vulkan process), or where that name is taken by something not ours, a temporary folder
    removed when the process exits."""
    if os.environ.get("XDG_RUNTIME_DIR") and os.path.isdir(os.environ["XDG_RUNTIME_DIR"]):
        return
    import tempfile

    shared = os.path.join(tempfile.gettempdir(), f"workbench-xdg-{os.getuid()}")
    with contextlib.suppress(FileExistsError, OSError):
        os.mkdir(shared, 0o700)
    if _private_folder(shared):
        os.environ["XDG_RUNTIME_DIR"] = shared
        return
    import atexit
    import shutil

    own = tempfile.mkdtemp(prefix="workbench-xdg-")
    atexit.register(shutil.rmtree, own, True)
    os.environ["XDG_RUNTIME_DIR"] = own


def _private_folder(path: str) -> bool:
    """A real folder (not a link), this user's, that nobody else may enter (as XDG_RUNTIME_DIR must be)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def discover() -> list[Backend]:
    """The one wgpu backend (available or not, with its reason); never raises."""
    return [VulkanBackend()]

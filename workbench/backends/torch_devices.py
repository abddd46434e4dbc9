"""What differs between torch device types, one small class each: cpu, cuda (or ROCm), xpu, mps, plugins.

Every class has the same pieces: why the device is unavailable, its
description and capabilities, how to synchronize, time, meter memory, move
an array onto it and release cached memory. :class:`TorchBackend` picks its
device type's class once, at construction, and never asks again which device
it is on. ``torch`` is always passed in: the backend imports it when probing,
never at discovery.

A CPU build of torch answers ``is_available() == False`` for accelerators but
raises on most other calls (``AssertionError`` for cuda/xpu, ``RuntimeError``
or ``NotImplementedError`` for mps), hence :data:`DEVICE_ERRORS`.
"""

from __future__ import annotations

import importlib
import platform
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from workbench.backends.base import Capabilities, DeviceInfo, EventTimer, SyncWallTimer, Timer
from workbench.backends.cpu_common import cpu_device_info
from workbench.backends.memory import AllocatorMemory, FallbackMemory, HighWaterMemory, MemoryMeter, SampledPeakMemory
from workbench.core.record import JsonObject

#: What a torch build without the device raises instead of answering.
DEVICE_ERRORS = (AssertionError, RuntimeError, NotImplementedError)


class TorchDevice:
    """An accelerator device type reached through ``torch.<type>`` (the defaults); subclasses differ."""

    device_class = "plugin"

    def __init__(self, device_type: str, plugin_package: str | None = None, index: int = 0):
        self.type = device_type
        self.plugin_package = plugin_package
        #: The device's ordinal within its type (``cuda:1`` is index 1): every query names it.
        self.index = index

    def why_unavailable(self, torch: Any) -> str | None:
        mod = self._plugin_module(torch)
        if mod is None:
            return f"torch has no '{self.type}' device module; install and import {self.plugin_package or 'its plugin'}"
        return None if mod.is_available() else f"no {self.type} device: {self.plugin_package or 'plugin'} found none"

    def _plugin_module(self, torch: Any) -> Any:
        mod = getattr(torch, self.type, None)
        if mod is None and self.plugin_package:
            importlib.import_module(self.plugin_package)  # registers torch.<device_type>
            mod = getattr(torch, self.type, None)
        return mod if hasattr(mod, "is_available") else None

    def module(self, torch: Any) -> Any:
        """torch.cuda / torch.xpu / torch.mps / torch.<plugin>."""
        return getattr(torch, self.type)

    def info(self, torch: Any) -> DeviceInfo:
        mod = self.module(torch)
        versions = {"torch": torch.__version__,
                    self.plugin_package or self.type: _dist_version(self.plugin_package or "")}
        props = or_none(lambda: mod.get_device_properties(self.index))
        name = or_none(lambda: mod.get_device_name(self.index)) or self.type
        return DeviceInfo(name=str(name), kind="accelerator",
                          total_memory_bytes=getattr(props, "total_memory", None), versions=versions)

    def refine(self, caps: Capabilities, torch: Any) -> Capabilities:
        """Add what this device type knows beyond dtypes (warp size, block limits)."""
        caps.device_events = True
        return caps

    def synchronizer(self, torch: Any) -> Callable[[], None]:
        sync = self.module(torch).synchronize
        return sync if self.index == 0 else lambda: sync(self.index)  # device 0: the call as it always was

    def device_count(self, torch: Any) -> int:
        """How many devices of this type torch sees (the probe has imported torch and found device 0)."""
        return int(self.module(torch).device_count())

    def timer(self, torch: Any, device: str, synchronize: Callable[[], None], meter: MemoryMeter) -> Timer:
        """Events on the current stream (``torch.Event``; before torch 2.4 only CUDA had timing events)."""
        if hasattr(torch, "Event"):
            def new_event() -> Any:
                return torch.Event(device, enable_timing=True)
        else:
            def new_event() -> Any:
                return torch.cuda.Event(enable_timing=True)
        return EventTimer("torch-event", new_event, lambda start, end: start.elapsed_time(end) / 1e3,
                          synchronize, after=meter.sample)

    #: Whether torch.accelerator's counters may serve this device type (CUDA and XPU read their own allocator).
    accelerator_counters = True

    def meter(self, torch: Any) -> MemoryMeter:
        """torch.accelerator's counters when they may and do serve this device, else the device module's
        allocator."""
        return ((self.accelerator_counters and _accelerator_meter(torch, self.type, self.index))
                or _allocator_meter(self.module(torch), f"torch.{self.type}", self.index))

    def place(self, tensor: Any, device: str) -> Any:
        """A tensor made by ``torch.from_numpy`` (sharing the numpy buffer), moved to be this device's own."""
        return tensor.to(device).contiguous()

    def release_cache(self, torch: Any) -> None:
        self.module(torch).empty_cache()

    def activate(self, torch: Any) -> None:
        """Make this device current: kernels that launch on the current device (Triton's, a plugin's) must
        run where this backend's tensors are."""
        set_device = getattr(self.module(torch), "set_device", None)
        if set_device is not None:
            set_device(self.index)


class CpuDevice(TorchDevice):
    device_class = "cpu"

    def why_unavailable(self, torch: Any) -> str | None:
        return None

    def info(self, torch: Any) -> DeviceInfo:
        info = cpu_device_info().to_dict()
        info["versions"] = {"torch": torch.__version__}
        info["extra"] = {**info["extra"], "torch_num_threads": torch.get_num_threads(),
                         "torch_num_interop_threads": torch.get_num_interop_threads(),
                         "mkldnn": torch.backends.mkldnn.is_available(),
                         "openmp": torch.backends.openmp.is_available()}
        return DeviceInfo(**info)

    def refine(self, caps: Capabilities, torch: Any) -> Capabilities:
        return caps

    def synchronizer(self, torch: Any) -> Callable[[], None]:
        return _nothing  # CPU ops run to completion before returning

    def device_count(self, torch: Any) -> int:
        return 1  # torch's CPU device is the whole host

    def timer(self, torch: Any, device: str, synchronize: Callable[[], None], meter: MemoryMeter) -> Timer:
        return SyncWallTimer(synchronize)

    def meter(self, torch: Any) -> MemoryMeter:
        return HighWaterMemory("process-wide (torch CPU allocator)")

    def place(self, tensor: Any, device: str) -> Any:
        return tensor.clone()  # from_numpy shares the numpy buffer: clone so the backend owns its copy

    def release_cache(self, torch: Any) -> None:
        pass

    def activate(self, torch: Any) -> None:
        pass


class CudaDevice(TorchDevice):
    """NVIDIA through CUDA, or AMD through ROCm (torch calls both ``cuda``)."""

    accelerator_counters = False

    @property
    def device_class(self) -> str:  # type: ignore[override]
        torch = sys.modules.get("torch")
        return "rocm" if torch is not None and getattr(torch.version, "hip", None) else "cuda"

    def why_unavailable(self, torch: Any) -> str | None:
        if torch.cuda.is_available():
            return None
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return f"torch {torch.__version__} was built without CUDA; install a CUDA/ROCm build (see pytorch.org)"
        return f"no CUDA device: torch {torch.__version__} found no GPU or no working driver"

    def info(self, torch: Any) -> DeviceInfo:
        props = torch.cuda.get_device_properties(self.index)
        hip = getattr(torch.version, "hip", None)
        versions = {"torch": torch.__version__, "hip" if hip else "cuda": str(hip or torch.version.cuda)}
        if torch.backends.cudnn.is_available():
            versions["cudnn"] = str(torch.backends.cudnn.version())
        return _gpu_info(props, "AMD" if hip else "NVIDIA", versions,
                         {"compute_capability": f"{props.major}.{props.minor}",
                          "arch": getattr(props, "gcnArchName", None)})

    def refine(self, caps: Capabilities, torch: Any) -> Capabilities:
        caps.device_events = True
        props = torch.cuda.get_device_properties(self.index)
        if props.major < 8 and not torch.version.hip:  # pre-Ampere: torch emulates bf16, slowly
            caps.dtypes = tuple(d for d in caps.dtypes if d != "bfloat16")
        caps.warp_size = getattr(props, "warp_size", 64 if torch.version.hip else 32)
        caps.shared_memory_per_block = getattr(props, "shared_memory_per_block", None)
        caps.max_threads_per_block = getattr(props, "max_threads_per_block", 1024)
        return caps


class XpuDevice(TorchDevice):
    """Intel GPUs."""

    device_class = "xpu"
    accelerator_counters = False

    def why_unavailable(self, torch: Any) -> str | None:
        if torch.xpu.is_available():
            return None
        if not torch.xpu._is_compiled():
            return f"torch {torch.__version__} was built without XPU; install an XPU build (see pytorch.org)"
        return f"no XPU device: torch {torch.__version__} found no Intel GPU or no working driver"

    def info(self, torch: Any) -> DeviceInfo:
        props = torch.xpu.get_device_properties(self.index)
        versions = {"torch": torch.__version__, "driver": str(getattr(props, "driver_version", "unknown"))}
        return _gpu_info(props, "Intel", versions, {"sub_group_sizes": list(getattr(props, "sub_group_sizes", []))})

    def refine(self, caps: Capabilities, torch: Any) -> Capabilities:
        caps.device_events = True
        props = torch.xpu.get_device_properties(self.index)
        sizes = list(getattr(props, "sub_group_sizes", []))
        caps.warp_size = max(sizes) if sizes else None
        caps.max_threads_per_block = getattr(props, "max_work_group_size", None)
        return caps


class MpsDevice(TorchDevice):
    """Apple GPUs. torch.mps has no peak counter: sampled, unless torch.accelerator serves MPS."""

    device_class = "mps"

    def why_unavailable(self, torch: Any) -> str | None:
        if torch.backends.mps.is_available():
            return None
        if not torch.backends.mps.is_built():
            return f"torch {torch.__version__} was built without MPS (MPS needs macOS on Apple silicon)"
        return "no MPS device (needs macOS 12.3+ on Apple silicon)"

    def info(self, torch: Any) -> DeviceInfo:
        return DeviceInfo(name=f"Apple GPU (MPS, {platform.machine()})", vendor="Apple", kind="gpu",
                          total_memory_bytes=or_none(lambda: torch.mps.recommended_max_memory()),
                          versions={"torch": torch.__version__, "macos": platform.mac_ver()[0]})

    def device_count(self, torch: Any) -> int:
        return 1  # a Mac has one GPU

    def activate(self, torch: Any) -> None:
        pass

    def meter(self, torch: Any) -> MemoryMeter:
        sampled = SampledPeakMemory(torch.mps.current_allocated_memory,
                                    "torch.mps.current_allocated_memory (no peak counter: peak sampled after "
                                    "timed calls and reads)")
        accelerator = _accelerator_meter(torch, "mps", self.index)
        # MPS stats through torch.accelerator were broken in older torch: the sampled counter stands in
        return FallbackMemory(accelerator, sampled, DEVICE_ERRORS) if accelerator else sampled


#: The built-in device types; any other type is a plugin (:class:`TorchDevice`).
BUILTIN_DEVICES: dict[str, type[TorchDevice]] = {"cpu": CpuDevice, "cuda": CudaDevice, "mps": MpsDevice,
                                                 "xpu": XpuDevice}


def torch_device(device_type: str, plugin_package: str | None = None, index: int = 0) -> TorchDevice:
    return BUILTIN_DEVICES.get(device_type, TorchDevice)(device_type, plugin_package, index)


def _gpu_info(props: Any, vendor: str, versions: dict[str, str], extra: JsonObject) -> DeviceInfo:
    clock_khz = getattr(props, "clock_rate", None)
    return DeviceInfo(name=props.name, vendor=vendor, kind="gpu", total_memory_bytes=props.total_memory,
                      compute_units=getattr(props, "multi_processor_count", None)
                      or getattr(props, "max_compute_units", None),
                      clock_mhz=clock_khz / 1e3 if clock_khz else None,
                      last_level_cache_bytes=getattr(props, "L2_cache_size", None),
                      versions=versions, extra=extra)


def _allocator_meter(mod: Any, name: str, index: int) -> AllocatorMemory:
    return AllocatorMemory(lambda: mod.memory_allocated(index), lambda: mod.max_memory_allocated(index),
                           lambda: mod.reset_peak_memory_stats(index),
                           f"{name} allocator (memory_allocated / max_memory_allocated)")


def _accelerator_meter(torch: Any, device_type: str, index: int) -> AllocatorMemory | None:
    """torch.accelerator's allocator counters, where the current accelerator is this device type."""
    acc = or_none(lambda: torch.accelerator.current_accelerator())
    if acc is None or acc.type != device_type or not hasattr(torch.accelerator, "memory_allocated"):
        return None
    return AllocatorMemory(lambda: torch.accelerator.memory_allocated(index),
                           lambda: torch.accelerator.max_memory_allocated(index),
                           lambda: or_none(lambda: torch.accelerator.reset_peak_memory_stats(index)),
                           "torch.accelerator allocator (memory_allocated / max_memory_allocated)")


def _nothing() -> None:
    pass


def or_none(fn: Callable[[], Any]) -> Any:
    """``fn()``, or None where it raises: optional device facts must not break a description."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - by definition: any failure means "not known"
        return None


def _dist_version(dist: str) -> str:
    try:
        return version(dist.split(".")[0].replace("_", "-"))
    except (PackageNotFoundError, ValueError):
        return "unknown"

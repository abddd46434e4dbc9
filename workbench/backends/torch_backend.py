"""PyTorch on each device type it can drive: cpu, cuda (or ROCm), mps, xpu and plugin devices.

One backend per device type, on device index 0 (``torch-cuda`` runs on
``cuda:0``). Plugin devices that register through PyTorch's PrivateUse1 hook
(``npu``, ``mlu``, ``musa`` ...) appear only when detected: torch already
imported with the hook renamed, or the plugin's package installed. They are
never listed on a guess.

A CPU build of torch answers ``is_available() == False`` for accelerators but
raises on most other calls (``AssertionError`` for cuda/xpu, ``RuntimeError``
or ``NotImplementedError`` for mps), so every probe catches those three.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable

import numpy as np

from .base import (KNOWN_DTYPES, Backend, Capabilities, DeviceInfo, MemoryStats, Probe, Sample,
                   SyncWallTimer, Timer)
from .cpu_common import HighWaterMemory, cpu_device_info

TORCH_HINT = "pip install torch==2.13.0 (CPU) or see pytorch.org"
#: What a torch build without the device raises instead of answering.
DEVICE_ERRORS = (AssertionError, RuntimeError, NotImplementedError)
BUILTIN_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")
#: Out-of-tree device types and the package that registers each with torch.
PLUGIN_PACKAGES = {"npu": "torch_npu", "mlu": "torch_mlu", "musa": "torch_musa", "hpu": "habana_frameworks.torch"}


class TorchEventTimer(Timer):
    """Device events recorded around the call on the current stream (``torch.Event``)."""

    kind = "torch-event"

    def __init__(self, backend: "TorchBackend"):
        self._b = backend

    def measure(self, fn: Callable[[], Any]) -> Sample:
        torch = sys.modules["torch"]
        if hasattr(torch, "Event"):
            start, end = (torch.Event(self._b.device, enable_timing=True) for _ in range(2))
        else:  # torch < 2.4: only CUDA had timing events
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        self._b.synchronize()
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        t1 = time.perf_counter()
        end.synchronize()
        self._b._sample_memory()
        return Sample(device_s=start.elapsed_time(end) / 1e3, host_s=t1 - t0)


class TorchBackend(Backend):
    runtime = "torch"

    def __init__(self, device_type: str, plugin_package: str | None = None):
        self.device_type = device_type
        self.name = f"torch-{device_type}"
        #: The ``torch.device`` string tensors of this backend live on.
        self.device = "cpu" if device_type == "cpu" else f"{device_type}:0"
        self._plugin_package = plugin_package
        self._dtypes: tuple[str, ...] | None = None
        self._host_mem = HighWaterMemory()
        self._sampled_peak = 0  # MPS fallback: torch.mps has no peak counter

    @property
    def device_class(self) -> str:  # type: ignore[override]
        if self.device_type == "cuda":
            torch = sys.modules.get("torch")
            return "rocm" if torch is not None and getattr(torch.version, "hip", None) else "cuda"
        return self.device_type if self.device_type in BUILTIN_DEVICE_TYPES else "plugin"

    # -- discovery -------------------------------------------------------
    def _probe_uncached(self) -> Probe:
        try:
            torch = importlib.import_module("torch")
        except ImportError:
            return Probe.missing(f"torch is not installed: {TORCH_HINT}")
        except Exception as exc:
            return Probe.missing(f"torch failed to import ({type(exc).__name__}: {exc}); {TORCH_HINT}")
        try:
            why_not = self._why_unavailable(torch)
            if why_not:
                return Probe.missing(why_not)
            torch.empty(1, device=self.device)  # the device answers, not just the flag
            return Probe.ok()
        except DEVICE_ERRORS as exc:
            return Probe.missing(f"torch {torch.__version__} cannot use {self.device}: {exc}")
        except Exception as exc:  # a broken plugin must not break discovery
            return Probe.missing(f"torch {torch.__version__} {self.device_type} probe failed: "
                                 f"{type(exc).__name__}: {exc}")

    def _why_unavailable(self, torch: Any) -> str | None:
        v, t = torch.__version__, self.device_type
        if t == "cpu":
            return None
        if t == "cuda":
            if torch.cuda.is_available():
                return None
            if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
                return f"torch {v} was built without CUDA; install a CUDA/ROCm build (see pytorch.org)"
            return f"no CUDA device: torch {v} found no GPU or no working driver"
        if t == "mps":
            if torch.backends.mps.is_available():
                return None
            if not torch.backends.mps.is_built():
                return f"torch {v} was built without MPS (MPS needs macOS on Apple silicon)"
            return "no MPS device (needs macOS 12.3+ on Apple silicon)"
        if t == "xpu":
            if torch.xpu.is_available():
                return None
            if not torch.xpu._is_compiled():
                return f"torch {v} was built without XPU; install an XPU build (see pytorch.org)"
            return f"no XPU device: torch {v} found no Intel GPU or no working driver"
        mod = self._plugin_module(torch)
        if mod is None:
            return f"torch has no '{t}' device module; install and import {self._plugin_package or 'its plugin'}"
        return None if mod.is_available() else f"no {t} device: {self._plugin_package or 'plugin'} found none"

    def _plugin_module(self, torch: Any) -> Any:
        mod = getattr(torch, self.device_type, None)
        if mod is None and self._plugin_package:
            importlib.import_module(self._plugin_package)  # registers torch.<device_type>
            mod = getattr(torch, self.device_type, None)
        return mod if hasattr(mod, "is_available") else None

    def _torch(self) -> Any:
        self.require()
        return sys.modules["torch"]

    def _device_module(self) -> Any:
        """torch.cuda / torch.xpu / torch.mps / torch.<plugin>."""
        return getattr(self._torch(), self.device_type)

    def device_info(self) -> DeviceInfo:
        torch = self._torch()
        versions = {"torch": torch.__version__}
        if self.device_type == "cpu":
            info = cpu_device_info().to_dict()
            info["versions"] = versions
            info["extra"] = {**info["extra"], "torch_num_threads": torch.get_num_threads(),
                             "torch_num_interop_threads": torch.get_num_interop_threads(),
                             "mkldnn": torch.backends.mkldnn.is_available(),
                             "openmp": torch.backends.openmp.is_available()}
            return DeviceInfo(**info)
        if self.device_type in ("cuda", "xpu"):
            return self._gpu_info(torch, versions)
        if self.device_type == "mps":
            return DeviceInfo(name=f"Apple GPU (MPS, {platform.machine()})", vendor="Apple", kind="gpu",
                              total_memory_bytes=_try(lambda: torch.mps.recommended_max_memory()),
                              versions={**versions, "macos": platform.mac_ver()[0]})
        mod = self._device_module()
        versions[self._plugin_package or self.device_type] = _dist_version(self._plugin_package or "")
        props = _try(lambda: mod.get_device_properties(0))
        return DeviceInfo(name=str(_try(lambda: mod.get_device_name(0)) or self.device_type), kind="accelerator",
                          total_memory_bytes=getattr(props, "total_memory", None), versions=versions)

    def _gpu_info(self, torch: Any, versions: dict[str, str]) -> DeviceInfo:
        props = self._device_module().get_device_properties(0)
        hip = getattr(torch.version, "hip", None)
        if self.device_type == "cuda":
            versions["hip" if hip else "cuda"] = str(hip or torch.version.cuda)
            if torch.backends.cudnn.is_available():
                versions["cudnn"] = str(torch.backends.cudnn.version())
            vendor = "AMD" if hip else "NVIDIA"
            extra = {"compute_capability": f"{props.major}.{props.minor}",
                     "arch": getattr(props, "gcnArchName", None)}
        else:
            versions["driver"] = str(getattr(props, "driver_version", "unknown"))
            vendor, extra = "Intel", {"sub_group_sizes": list(getattr(props, "sub_group_sizes", []))}
        clock_khz = getattr(props, "clock_rate", None)
        return DeviceInfo(name=props.name, vendor=vendor, kind="gpu", total_memory_bytes=props.total_memory,
                          compute_units=getattr(props, "multi_processor_count", None)
                          or getattr(props, "max_compute_units", None),
                          clock_mhz=clock_khz / 1e3 if clock_khz else None,
                          last_level_cache_bytes=getattr(props, "L2_cache_size", None),
                          versions=versions, extra=extra)

    def capabilities(self) -> Capabilities:
        torch = self._torch()
        if self._dtypes is None:
            self._dtypes = tuple(d for d in KNOWN_DTYPES if _dtype_works(torch, d, self.device))
        caps = Capabilities(dtypes=self._dtypes, device_events=self.device_type != "cpu")
        if self.device_type == "cuda":
            props = torch.cuda.get_device_properties(0)
            if props.major < 8 and not torch.version.hip:  # pre-Ampere: torch emulates bf16, slowly
                caps.dtypes = tuple(d for d in caps.dtypes if d != "bfloat16")
            caps.warp_size = getattr(props, "warp_size", 64 if torch.version.hip else 32)
            caps.shared_memory_per_block = getattr(props, "shared_memory_per_block", None)
            caps.max_threads_per_block = getattr(props, "max_threads_per_block", 1024)
        elif self.device_type == "xpu":
            props = torch.xpu.get_device_properties(0)
            sizes = list(getattr(props, "sub_group_sizes", []))
            caps.warp_size = max(sizes) if sizes else None
            caps.max_threads_per_block = getattr(props, "max_work_group_size", None)
        return caps

    # -- arrays ----------------------------------------------------------
    def _dtype(self, name: str) -> Any:
        torch = self._torch()
        dt = getattr(torch, name, None)
        if not isinstance(dt, torch.dtype):
            raise ValueError(f"torch has no dtype {name!r}")
        return dt

    def from_numpy(self, a: np.ndarray) -> Any:
        torch = self._torch()
        host = np.ascontiguousarray(a)
        if not host.flags.writeable:
            host = host.copy()
        t = torch.from_numpy(host)
        # on the CPU from_numpy shares the numpy buffer: clone so the backend owns its copy
        return t.clone() if self.device_type == "cpu" else t.to(self.device).contiguous()

    def to_numpy(self, x: Any) -> np.ndarray:
        self.require()
        t = x.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":  # numpy has no bfloat16: widen exactly to float32
            t = t.float()
        return t.numpy()

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._torch().empty(tuple(shape), dtype=self._dtype(dtype), device=self.device)

    def full(self, shape: tuple[int, ...], dtype: str, value: float) -> Any:
        return self._torch().full(tuple(shape), value, dtype=self._dtype(dtype), device=self.device)

    def cast(self, x: Any, dtype: str) -> Any:
        return x.to(self._dtype(dtype))

    # -- execution -------------------------------------------------------
    def synchronize(self) -> None:
        if self.device_type != "cpu":  # CPU ops run to completion before returning
            self._device_module().synchronize()

    def timer(self) -> Timer:
        self.require()
        if self.device_type == "cpu":
            return SyncWallTimer(self.synchronize)
        return TorchEventTimer(self)

    # -- memory ----------------------------------------------------------
    def _memory_source(self, torch: Any) -> str:
        """cuda/xpu: their allocator; mps and plugins: torch.accelerator when it serves this device."""
        if self.device_type in ("cpu", "cuda", "xpu"):
            return {"cpu": "host", "cuda": "module", "xpu": "module"}[self.device_type]
        acc = _try(lambda: torch.accelerator.current_accelerator())
        if acc is not None and acc.type == self.device_type and hasattr(torch.accelerator, "memory_allocated"):
            return "accelerator"
        return "mps-sampled" if self.device_type == "mps" else "module"

    def memory(self) -> MemoryStats:
        torch = self._torch()
        source = self._memory_source(torch)
        if source == "host":
            s = self._host_mem.stats()
            return MemoryStats(s.current_bytes, s.peak_bytes, f"{s.method}; process-wide (torch CPU allocator)")
        if source == "accelerator":
            try:
                return MemoryStats(torch.accelerator.memory_allocated(0), torch.accelerator.max_memory_allocated(0),
                                   "torch.accelerator allocator (memory_allocated / max_memory_allocated)")
            except DEVICE_ERRORS:
                if self.device_type != "mps":
                    raise  # MPS stats through torch.accelerator were broken in older torch: fall back below
                source = "mps-sampled"
        if source == "mps-sampled":
            cur = self._sample_memory()
            return MemoryStats(cur, self._sampled_peak,
                               "torch.mps.current_allocated_memory (no peak counter: peak sampled after "
                               "timed calls and reads)")
        mod = self._device_module()
        return MemoryStats(mod.memory_allocated(0), mod.max_memory_allocated(0),
                           f"torch.{self.device_type} allocator (memory_allocated / max_memory_allocated)")

    def _sample_memory(self) -> int:
        if self.device_type != "mps":
            return 0
        cur = int(sys.modules["torch"].mps.current_allocated_memory())
        self._sampled_peak = max(self._sampled_peak, cur)
        return cur

    def reset_peak_memory(self) -> None:
        torch = self._torch()
        source = self._memory_source(torch)
        if source == "host":
            self._host_mem.reset()
        elif source == "module":
            self._device_module().reset_peak_memory_stats(0)
        else:
            if source == "accelerator":
                _try(lambda: torch.accelerator.reset_peak_memory_stats(0))
            self._sampled_peak = 0
            self._sample_memory()

    def free_memory(self) -> None:
        gc.collect()
        if self.device_type != "cpu" and self.available:
            self._device_module().empty_cache()


def _dtype_works(torch: Any, name: str, device: str) -> bool:
    """Allocate, compute and read back: the only honest test of dtype support on a device."""
    try:
        x = torch.ones(8, dtype=getattr(torch, name), device=device)
        return float((x * 2 + x).sum().float().cpu()) == 24.0
    except (*DEVICE_ERRORS, TypeError):
        return False


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        return None


def _dist_version(dist: str) -> str:
    try:
        return version(dist.split(".")[0].replace("_", "-"))
    except (PackageNotFoundError, ValueError):
        return "unknown"


def _plugin_device_types() -> dict[str, str | None]:
    """Plugin device types that are really present, without importing torch.

    Counts as detected: torch already imported with PrivateUse1 renamed or a
    ``torch.<name>`` module that has ``is_available``; or a known plugin's
    package installed (it registers its module when imported).
    """
    found: dict[str, str | None] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        name = _try(lambda: torch._C._get_privateuse1_backend_name()) or "privateuseone"
        if name != "privateuseone":
            found[name] = PLUGIN_PACKAGES.get(name)
        for t, pkg in PLUGIN_PACKAGES.items():
            if hasattr(getattr(torch, t, None), "is_available"):
                found[t] = pkg
    for t, pkg in PLUGIN_PACKAGES.items():
        if t not in found and _try(lambda: importlib.util.find_spec(pkg.split(".")[0])) is not None:
            found[t] = pkg
    return found


def discover() -> list[Backend]:
    """cpu/cuda/mps/xpu always (to say why not), plugin devices only when detected."""
    backends: list[Backend] = [TorchBackend(t) for t in BUILTIN_DEVICE_TYPES]
    try:
        plugins = _plugin_device_types()
    except Exception:
        plugins = {}
    backends += [TorchBackend(t, pkg) for t, pkg in plugins.items() if t not in BUILTIN_DEVICE_TYPES]
    return backends

"""What is asked of a backend once, not at every cell: its device, its GPU monitor, its one-time costs."""

from __future__ import annotations

import logging
import threading
import weakref

from workbench.backends import registry as backend_registry
from workbench.backends.base import Backend, DeviceInfo
from workbench.core.conditions import GpuMonitor, probe_gpu_monitor
from workbench.measure.result import CellResult
from workbench.measure.timer import timer_overhead

log = logging.getLogger(__name__)

_device_infos: weakref.WeakKeyDictionary[Backend, DeviceInfo] = weakref.WeakKeyDictionary()


def device_info(backend: Backend) -> DeviceInfo:
    """``backend.device_info()``, asked once per backend object: some backends query libraries every time
    (numpy's BLAS through threadpoolctl: ~10 ms), and a sweep with rounds asks at every visit."""
    try:
        info = _device_infos.get(backend)
    except TypeError:  # an unhashable backend: ask it every time
        return backend.device_info()
    if info is None:
        info = backend.device_info()
        try:
            _device_infos[backend] = info
        except TypeError:
            pass
    return info


_gpu_monitors: dict[str, GpuMonitor | None] = {}
_gpu_monitors_lock = threading.Lock()


def gpu_monitor(backend: Backend) -> GpuMonitor | None:
    """The GPU monitor (NVML, AMD SMI) of a CUDA / ROCm backend, probed once per backend; None for other
    backends, or when no monitor can read the device (the result's GPU fields then stay empty)."""
    platform = getattr(backend, "device_class", "cpu")
    if platform not in ("cuda", "rocm"):
        return None
    with _gpu_monitors_lock:
        if backend.name not in _gpu_monitors:
            mon, why = probe_gpu_monitor(platform, int(getattr(backend, "device_id", 0) or 0))
            if mon is None:
                log.info("no GPU monitor for %s: %s", backend.name, why)
            _gpu_monitors[backend.name] = mon
        return _gpu_monitors[backend.name]


def prepare_backend(name: str) -> str | None:
    """One-time costs of a backend — import and probe, device query, timer-overhead calibration —
    paid before its first cell so they never count against a cell's time limit. Returns a problem
    (the cells will report it themselves) or None."""
    try:
        backend = backend_registry.get(name)
        if not backend.probe().available:
            return backend.probe().reason
        device_info(backend)
        timer_overhead(backend)
    except Exception as exc:  # noqa: BLE001 - the cells of this backend will record the error
        return f"{type(exc).__name__}: {exc}"
    return None


def after_oom(res: CellResult, backend: str) -> None:
    """After an out-of-memory cell the backend frees its caches (a device memory pool), before the next."""
    try:
        backend_registry.get(backend).free_memory()
    except Exception as exc:  # noqa: BLE001 - freeing is best effort
        res.note(f"free_memory failed: {exc}")

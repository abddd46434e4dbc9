"""Backend adapters: one module per runtime, all fulfilling :class:`~workbench.backends.base.Backend`."""

from workbench.backends.memory import MemoryStats  # noqa: I001 - the registry's names on two lines, on purpose
from workbench.backends.base import Backend, BackendUnavailable, Capabilities, DeviceInfo, Probe, Sample, Timer
from workbench.backends.registry import all_backends, available_backends, get, get_backend, register_backend
from workbench.backends.registry import register_runtime, set_backend
from workbench.backends.runtime import ArrayEdits, Runtime

__all__ = ["ArrayEdits", "Backend", "BackendUnavailable", "Capabilities", "DeviceInfo", "MemoryStats", "Probe",
           "Runtime", "Sample", "Timer", "all_backends", "available_backends", "get", "get_backend",
           "register_backend", "register_runtime", "set_backend"]

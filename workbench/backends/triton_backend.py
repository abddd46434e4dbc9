"""Triton kernels (runtime ``triton``): compiled on torch's GPU tensors (``triton-cuda`` for CUDA and ROCm,
``triton-xpu``), and through the interpreter on CPU torch tensors (``triton-interp``).

Each GPU is its own backend, named as torch's are: ``triton-cuda`` (device 0), ``triton-cuda:1`` ...
On a GPU, the same ``@triton.jit`` variants are compiled by Triton for the device and launched on
``torch.cuda`` / ``torch.xpu`` tensors; arrays, timing (device events) and memory are torch's for that
device, and the backend ranks like torch on it. Its worker starts with ``TRITON_INTERPRET=0``, so a parent
that has set the interpreter up for ``triton-interp`` does not turn the GPU kernels into interpreted ones.

With ``TRITON_INTERPRET=1`` Triton runs ``@triton.jit`` kernels in Python
(numpy underneath) on CPU tensors: no GPU, no compiler. Its rows are
correctness results, never speed: the device is named "Triton interpreter on
CPU" so reports mark them like PoCL or lavapipe rows.

Triton fixes interpreted or compiled when it is first imported (its standard library, ``tl.sum``,
``tl.max`` ..., is jitted then), so one process runs one or the other. Cells run in worker processes by
default, each backend's worker starting with its :attr:`worker_env` (an unmasked out-of-bounds access in an
interpreted kernel can kill the process: in a worker it becomes a ``crashed`` row, not a dead session). In
process (``isolation="in-process"``), a cell runs with its backend's ``worker_env`` set for its duration, and
a backend whose mode this process's triton already excludes gives an ``unsupported`` row saying so
(:meth:`in_process_problem`).

The probes find triton without importing it. Importing triton's LLVM into a process that has already opened
a lavapipe (Mesa, LLVM) Vulkan adapter segfaults (triton 3.9, wgpu 0.32, seen 2026-11-22), and
``torch.compile`` imports triton whenever it is installed; so the Vulkan backend imports triton before it
opens an adapter (``vulkan_backend._load_triton_first``), and the other order works.

Arrays, timing and memory are torch-cpu's (:class:`TorchBackend` on ``cpu``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version

from workbench.backends.base import Backend, DeviceInfo, Probe
from workbench.backends.registry import device_backend_name
from workbench.backends.runtime import Runtime
from workbench.backends.torch_backend import TORCH_HINT, TorchBackend, count_devices

TRITON_HINT = "pip install 'kernel-workbench[triton]' (triton>=3.0; torch CPU build is enough)"
INTERPRET_ENV = {"TRITON_INTERPRET": "1"}
#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 70
#: Its arrays are torch tensors: audits edit them as torch's, and a row's device time is torch's.
RUNTIMES = (Runtime("triton", rank=60, modules=("triton",), marker="h", packages=("triton",),
                    headline_package="triton"),)


def _triton_found() -> bool:
    """Is triton installed? Found without importing it (see the module docstring)."""
    try:
        return importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):
        return False


def imported_interpreted() -> bool | None:
    """Was this process's triton imported in interpreter mode? None when triton is not imported. Triton
    decides at import time for its standard library (``tl.sum``, ``tl.max`` ... are jitted then), so one
    process runs either interpreted or compiled Triton kernels, never both."""
    lang = sys.modules.get("triton.language")
    if lang is None:
        return None
    return type(getattr(getattr(lang, "standard", None), "sum", None)).__name__ == "InterpretedFunction"


def _with_triton(info: DeviceInfo, **changes: object) -> DeviceInfo:
    """``info`` with triton's version among its versions, and ``changes`` applied."""
    try:
        triton_version = version("triton")
    except PackageNotFoundError:
        triton_version = "unknown"
    return replace(info, versions={**info.versions, "triton": triton_version}, **changes)


class TritonInterpreterBackend(TorchBackend):
    """Triton kernels interpreted on the CPU, on CPU torch tensors."""

    runtime = "triton"
    worker_env = INTERPRET_ENV
    #: Interpreted kernels take seconds per call and say nothing about speed: a sweep over "every backend"
    #: (the quick suite, `make demo`) would spend minutes here, so it is timed only when named.
    timed_only_when_named = True

    def __init__(self) -> None:
        super().__init__("cpu")
        self.name = "triton-interp"

    @property
    def priority(self) -> int:  # type: ignore[override]
        return 1000  # a correctness tool: never the automatic choice

    def _probe_uncached(self) -> Probe:
        try:
            importlib.import_module("torch")
        except ImportError:
            return Probe.missing(f"torch is not installed (Triton's interpreter runs on CPU torch tensors): "
                                 f"{TORCH_HINT}")
        except Exception as exc:  # noqa: BLE001 - a broken install is listed with its reason
            return Probe.missing(f"torch failed to import ({type(exc).__name__}: {exc}); {TORCH_HINT}")
        if not _triton_found():
            return Probe.missing(f"triton is not installed: {TRITON_HINT}")
        return super()._probe_uncached()

    def in_process_problem(self) -> str | None:
        if imported_interpreted() is False:
            return ("triton was imported in this process in compiled mode (by torch.compile, a GPU Triton backend, "
                    "or the Vulkan backend, which loads it first), and Triton fixes the mode at import: run "
                    "triton-interp in a worker process (the default isolation)")
        return None

    def device_info(self) -> DeviceInfo:
        info = super().device_info()
        return _with_triton(info, name="Triton interpreter on CPU", kind="cpu",
                            extra={**info.extra, "triton_interpret": os.environ.get("TRITON_INTERPRET"),
                                   "cpu": info.name})


class TritonGpuBackend(TorchBackend):
    """Triton kernels compiled for torch's ``cuda`` (NVIDIA, or AMD under ROCm) or ``xpu`` device."""

    runtime = "triton"
    worker_env = {"TRITON_INTERPRET": "0"}

    def __init__(self, device_type: str, index: int = 0) -> None:
        super().__init__(device_type, None, index)
        self.name = device_backend_name(f"triton-{device_type}", index)  # triton-cuda, triton-cuda:1 ...

    @property
    def priority(self) -> int:  # type: ignore[override]
        return super().priority + 1  # right after torch on the same device: the automatic choice stays torch

    def _probe_uncached(self) -> Probe:
        if not _triton_found():
            return Probe.missing(f"triton is not installed: {TRITON_HINT}")
        probe = super()._probe_uncached()
        if not probe.available:
            return Probe.missing(f"no torch {self.device_type} device for Triton: {probe.reason}")
        return probe

    def in_process_problem(self) -> str | None:
        if imported_interpreted() or os.environ.get("TRITON_INTERPRET") == "1":
            return ("Triton runs interpreted in this process (TRITON_INTERPRET=1, e.g. after triton-interp ran "
                    f"here): run {self.name} in a worker process (the default isolation)")
        return None

    def device_info(self) -> DeviceInfo:
        return _with_triton(super().device_info())


def discover() -> list[Backend]:
    return [TritonInterpreterBackend(), TritonGpuBackend("cuda"), TritonGpuBackend("xpu")]


def discover_devices(base: list[Backend]) -> list[Backend]:
    """Devices 1.. of each GPU type whose device 0 is available, as for torch (``triton-cuda:1`` ...)."""
    return [TritonGpuBackend(b.device_type, i) for b in base if isinstance(b, TritonGpuBackend)
            for i in range(1, count_devices(b))]

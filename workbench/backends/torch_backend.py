"""PyTorch on each device type it can drive: cpu, cuda (or ROCm), mps, xpu and plugin devices.

One backend per device: ``torch-cuda`` runs on ``cuda:0`` (the name it has
always had, so stored rows stay comparable; ``torch-cuda:0`` is an alias) and
``torch-cuda:1``, ``torch-cuda:2`` ... on the others, likewise for xpu and
plugin devices. Discovery lists device 0 of each type without importing
torch; the other devices are counted by :func:`discover_devices` only where
device 0 probes available (so a machine without the device lists one
unavailable backend, not N). What differs between device types lives in
:mod:`workbench.backends.torch_devices`, one class per type, chosen at
construction; the pieces that need torch itself (synchronize, memory meter)
are made once, on first use after the probe imported torch.

Plugin devices that register through PyTorch's PrivateUse1 hook (``npu``,
``mlu``, ``musa`` ...) appear only when detected: torch already imported with
the hook renamed, or the plugin's package installed. They are never listed on
a guess.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from workbench.backends.base import KNOWN_DTYPES, Backend, Capabilities, DeviceInfo, Probe, Timer, TimingModeUnavailable
from workbench.backends.memory import MemoryMeter
from workbench.backends.registry import device_backend_name
from workbench.backends.runtime import ArrayEdits, Runtime, Settings
from workbench.backends.torch_devices import BUILTIN_DEVICES, DEVICE_ERRORS, or_none, torch_device

TORCH_HINT = "pip install torch==2.13.0 (CPU) or see pytorch.org"
#: Out-of-tree device types and the package that registers each with torch.
PLUGIN_PACKAGES = {"npu": "torch_npu", "mlu": "torch_mlu", "musa": "torch_musa", "hpu": "habana_frameworks.torch"}


class TorchBackend(Backend):
    runtime = "torch"

    def __init__(self, device_type: str, plugin_package: str | None = None, index: int = 0):
        self.device_type = device_type
        self.plugin_package = plugin_package
        #: The device's ordinal within its type; ``torch-cuda`` is device 0, ``torch-cuda:1`` device 1.
        self.device_index = index
        self.name = device_backend_name(f"torch-{device_type}", index)
        #: The ``torch.device`` string tensors of this backend live on.
        self.device = "cpu" if device_type == "cpu" else f"{device_type}:{index}"
        self._kind = torch_device(device_type, plugin_package, index)
        self._dtypes: tuple[str, ...] | None = None

    @property
    def device_class(self) -> str:  # type: ignore[override]
        return self._kind.device_class

    # -- discovery -------------------------------------------------------
    def _probe_uncached(self) -> Probe:
        try:
            torch = importlib.import_module("torch")
        except ImportError:
            return Probe.missing(f"torch is not installed: {TORCH_HINT}")
        except Exception as exc:  # noqa: BLE001 - a broken install must be listed with its reason, not crash discovery
            return Probe.missing(f"torch failed to import ({type(exc).__name__}: {exc}); {TORCH_HINT}")
        try:
            why_not = self._kind.why_unavailable(torch)
            if why_not:
                return Probe.missing(why_not)
            torch.empty(1, device=self.device)  # the device answers, not just the flag
            return Probe.ok()
        except DEVICE_ERRORS as exc:
            return Probe.missing(f"torch {torch.__version__} cannot use {self.device}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break discovery
            return Probe.missing(f"torch {torch.__version__} {self.device_type} probe failed: "
                                 f"{type(exc).__name__}: {exc}")

    def _torch(self) -> Any:
        self.require()
        return sys.modules["torch"]

    def _torch_here(self) -> Any:
        """torch, with this backend's device made current (before arrays are made or timed on it)."""
        torch = self._torch()
        self._kind.activate(torch)
        return torch

    def device_info(self) -> DeviceInfo:
        return self._kind.info(self._torch())

    def capabilities(self) -> Capabilities:
        torch = self._torch()
        if self._dtypes is None:
            self._dtypes = tuple(d for d in KNOWN_DTYPES if _dtype_works(torch, d, self.device))
        return self._kind.refine(Capabilities(dtypes=self._dtypes), torch)

    # -- arrays ----------------------------------------------------------
    def _dtype(self, name: str) -> Any:
        torch = self._torch()
        dt = getattr(torch, name, None)
        if not isinstance(dt, torch.dtype):
            raise ValueError(f"torch has no dtype {name!r}")
        return dt

    def from_numpy(self, a: np.ndarray) -> Any:
        torch = self._torch_here()
        host = np.ascontiguousarray(a)
        if not host.flags.writeable:
            host = host.copy()
        return self._kind.place(torch.from_numpy(host), self.device)

    def adopt(self, a: np.ndarray) -> Any | None:
        """torch's CPU tensors share a numpy array's memory (``torch.from_numpy``); other devices' do not."""
        if self._kind.device_class != "cpu" or not a.flags.writeable:
            return None
        return self._torch_here().from_numpy(a)

    def to_numpy(self, x: Any) -> np.ndarray:
        self.require()
        t = x.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":  # numpy has no bfloat16: widen exactly to float32
            t = t.float()
        return t.numpy()

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._torch_here().empty(tuple(shape), dtype=self._dtype(dtype), device=self.device)

    def full(self, shape: tuple[int, ...], dtype: str, value: float) -> Any:
        return self._torch_here().full(tuple(shape), value, dtype=self._dtype(dtype), device=self.device)

    def cast(self, x: Any, dtype: str) -> Any:
        return x.to(self._dtype(dtype))

    # -- execution -------------------------------------------------------
    @cached_property
    def _synchronize(self) -> Callable[[], None]:
        return self._kind.synchronizer(self._torch())

    def synchronize(self) -> None:
        self._synchronize()

    def timer(self) -> Timer:
        return self._kind.timer(self._torch_here(), self.device, self.synchronize, self.meter)

    def mode_timer(self, mode: str) -> Timer:
        """On CUDA/ROCm: ``kernel`` from CUPTI's records (NVIDIA only), ``graph`` from a captured CUDA graph's
        replays; other devices have neither."""
        from workbench.backends.cuda_timers import GraphTimer, kernel_timer, torch_graph_capture

        if self.device_class not in ("cuda", "rocm"):
            return super().mode_timer(mode)
        torch = self._torch_here()
        if mode == "kernel":
            if self.device_class == "rocm":
                raise TimingModeUnavailable("kernel timing reads CUPTI, which ROCm does not have")
            return kernel_timer(self.synchronize)
        if mode == "graph":
            return GraphTimer(torch_graph_capture(torch), self.timer())
        return super().mode_timer(mode)

    # -- memory ----------------------------------------------------------
    @cached_property
    def meter(self) -> MemoryMeter:  # type: ignore[override]
        return self._kind.meter(self._torch())

    def free_memory(self) -> None:
        gc.collect()
        if self.available:
            self._kind.release_cache(sys.modules["torch"])


def _dtype_works(torch: Any, name: str, device: str) -> bool:
    """Allocate, compute and read back: the only honest test of dtype support on a device."""
    try:
        x = torch.ones(8, dtype=getattr(torch, name), device=device)
        return float((x * 2 + x).sum().float().cpu()) == 24.0
    except (*DEVICE_ERRORS, TypeError):
        return False


def _plugin_device_types() -> dict[str, str | None]:
    """Plugin device types that are really present, without importing torch.

    Counts as detected: torch already imported with PrivateUse1 renamed or a
    ``torch.<name>`` module that has ``is_available``; or a known plugin's
    package installed (it registers its module when imported).
    """
    found: dict[str, str | None] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        name = or_none(lambda: torch._C._get_privateuse1_backend_name()) or "privateuseone"
        if name != "privateuseone":
            found[name] = PLUGIN_PACKAGES.get(name)
        for t, pkg in PLUGIN_PACKAGES.items():
            if hasattr(getattr(torch, t, None), "is_available"):
                found[t] = pkg
    for t, pkg in PLUGIN_PACKAGES.items():
        if t not in found and or_none(lambda pkg=pkg: importlib.util.find_spec(pkg.split(".")[0])) is not None:
            found[t] = pkg
    return found


def discover() -> list[Backend]:
    """cpu/cuda/mps/xpu always (to say why not), plugin devices only when detected."""
    backends: list[Backend] = [TorchBackend(t) for t in BUILTIN_DEVICES]
    try:
        plugins = _plugin_device_types()
    except Exception:  # noqa: BLE001 - plugin detection is best-effort; built-in devices stay listed
        plugins = {}
    backends += [TorchBackend(t, pkg) for t, pkg in plugins.items() if t not in BUILTIN_DEVICES]
    return backends


def discover_devices(base: list[Backend]) -> list[Backend]:
    """Devices 1.. of every device type whose device 0 is available (this imports torch)."""
    return [TorchBackend(b.device_type, b.plugin_package, i)  # type: ignore[attr-defined]
            for b in base for i in range(1, count_devices(b))]


def count_devices(b: Backend) -> int:
    """How many devices ``b``'s type has here: 0 when device 0 is unavailable, never an exception."""
    if not isinstance(b, TorchBackend) or b.device_index != 0 or not b.probe().available:
        return 0
    try:
        return max(1, b._kind.device_count(sys.modules["torch"]))
    except Exception:  # noqa: BLE001 - a plugin without device_count: its device 0 is all we know
        return 1


# -- what the layers above the adapter know of torch ------------------------------------------------------------
def _thread_settings() -> Settings:
    """torch's thread pools where torch is loaded (importing it just to ask would cost seconds)."""
    torch = sys.modules.get("torch")
    try:
        return {"torch_num_threads": torch.get_num_threads(),
                "torch_num_interop_threads": torch.get_num_interop_threads()}
    except Exception:  # noqa: BLE001 - not loaded (None has no such method), or half-imported
        return {"torch_num_threads": None}


def _precision_settings() -> Settings:
    """torch's TF32 flags and float32 matmul precision (TF32 lets a float32 matmul round its inputs to 10 bits)."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "get_float32_matmul_precision"):
        return {}
    try:
        return {"torch_matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
                "torch_cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
                "torch_float32_matmul_precision": str(torch.get_float32_matmul_precision())}
    except Exception:  # noqa: BLE001 - a torch without these flags records none
        return {}


def _array_backend(x: Any) -> str | None:
    """A tensor's backend, from its ``device.type`` (``torch-cuda``, ``torch-cpu`` ...)."""
    if not hasattr(x, "device"):
        return None
    return f"torch-{getattr(x.device, 'type', str(x.device))}"


def _is_tensor(dev: Any) -> bool:
    return type(dev).__module__.split(".")[0] == "torch"


def _write(dev: Any, pos: np.ndarray, values: np.ndarray) -> None:
    torch = sys.modules["torch"]
    dev.view(-1)[torch.as_tensor(pos, device=dev.device)] = torch.as_tensor(values).to(dev.device, dev.dtype)


def _move(dev: Any, pos: np.ndarray, src: np.ndarray) -> None:
    torch = sys.modules["torch"]
    flat = dev.view(-1)
    flat[torch.as_tensor(pos, device=dev.device)] = flat[torch.as_tensor(src, device=dev.device)]


#: Tensors are edited in place by indexing on their device (Triton's arrays are torch tensors too).
TENSOR_EDITS = ArrayEdits(writable=lambda dev: _is_tensor(dev) and bool(dev.is_contiguous()), write=_write, move=_move)

#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 30
RUNTIMES = (Runtime(
    "torch", rank=30, modules=("torch",), marker="^", guards_outputs=True, distribution="torch", packages=("torch",),
    headline_package="torch", key_versions=("torch", "cuda", "hip", "macos"),
    package_prefixes=("torch-",), thread_settings=_thread_settings, precision_settings=_precision_settings,
    event_timers=("torch-event",), array_backend=_array_backend, compiled_marks=("_torchdynamo_orig_callable",),
    array_edits=TENSOR_EDITS,
    mode_meanings={
        "graph": "on CUDA/HIP: torch.cuda.CUDAGraph captured once per shape, inputs copied into its static buffers "
                 "and replayed; on the CPU: a preallocated out= plan (every op writes into a buffer allocated once)",
        "fused": "torch.compile (inductor) of the whole block, compiled once per shape"}),)

"""CuPy on an NVIDIA GPU (CUDA) or an AMD GPU (ROCm/HIP): library calls and portable device kernels.

CuPy imports fine on a machine without a GPU; ``cupy.cuda.is_available()``
then answers False and anything touching a device raises
``CUDARuntimeError`` (``cudaErrorInsufficientDriver`` without a driver). The
probe turns both into a reason, and every other method calls ``require()``
first so an unavailable backend fails with :class:`BackendUnavailable`, not a
driver error.

Memory comes from CuPy's default memory pool: ``used_bytes`` is what live
arrays hold. The pool has no high-water counter, so the peak is sampled after
every allocation made through this backend, every timed call and every read;
a short-lived temporary inside one kernel call can escape it.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import numpy as np

from workbench.backends.base import Backend, Capabilities, DeviceInfo, EventTimer, Probe, Timer, TimingModeUnavailable
from workbench.backends.cupy_portable import DEVICE_CODE, new_capture
from workbench.backends.memory import SampledPeakMemory
from workbench.backends.registry import device_backend_name
from workbench.backends.runtime import ArrayEdits, Runtime, Settings

INSTALL_HINT = "pip install cupy-cuda13x (CUDA 13 driver) or cupy-cuda12x"
#: The device this process last made current through a backend (CUDA starts every process on device 0).
_current_device = [0]
MEMORY_METHOD = "cupy default memory pool used_bytes (peak sampled after allocations, timed calls and reads)"



#: Where an NVIDIA driver shows itself on Linux: without it CUDA's "driver version is insufficient" means no driver.
NVIDIA_DRIVER_FILE = "/proc/driver/nvidia/version"


def cuda_missing_reason(exc: BaseException, cupy_version: str) -> str:
    """The probe's reason for a CUDA error. CUDA answers "driver version is insufficient" also where there is no
    driver at all, which reads as "upgrade your driver" on a machine with no GPU: there it says no driver."""
    said = f"{type(exc).__name__}: {exc}"
    if "InsufficientDriver" in said and not os.path.exists(NVIDIA_DRIVER_FILE):
        return (f"no CUDA device/driver: no NVIDIA driver is installed ({NVIDIA_DRIVER_FILE} is absent), so there "
                f"is no GPU for CUDA to use (CUDA's own words: {said}; cupy {cupy_version})")
    return f"no CUDA device/driver: {said} (cupy {cupy_version})"

class CupyBackend(Backend):
    runtime = "cupy"
    #: What this backend is, in words (:func:`workbench.backends.plain_words.what_it_is`).
    in_words = "CuPy on an NVIDIA GPU (CUDA)"

    def __init__(self, device_id: int = 0):
        #: CUDA/HIP ordinal of the device this backend runs on.
        self.device_id = self.device_index = device_id
        #: ``cupy`` is device 0 (as it always was; ``cupy:0`` is an alias), ``cupy:1`` device 1 ...
        self.name = device_backend_name("cupy", device_id)
        self.meter = SampledPeakMemory(self._pool_used_bytes, MEMORY_METHOD)

    def _pool_used_bytes(self) -> int:
        """This device's share of CuPy's default pool (the pool answers for the current device)."""
        cp = self._cupy()
        with cp.cuda.Device(self.device_id):
            return int(cp.get_default_memory_pool().used_bytes())

    @property
    def device_class(self) -> str:  # type: ignore[override]
        return "rocm" if self._is_hip() else "cuda"

    def _is_hip(self) -> bool:
        cp = sys.modules.get("cupy")
        return bool(cp is not None and getattr(cp.cuda.runtime, "is_hip", False))

    # -- discovery -------------------------------------------------------
    def _probe_uncached(self) -> Probe:
        try:
            cp = importlib.import_module("cupy")
        except ImportError:
            return Probe.missing(f"cupy is not installed: {INSTALL_HINT}")
        except Exception as exc:  # noqa: BLE001 - e.g. two cupy wheels installed side by side
            return Probe.missing(f"cupy failed to import ({type(exc).__name__}: {exc}); {INSTALL_HINT}")
        try:
            if not cp.cuda.is_available():
                cp.cuda.runtime.getDeviceCount()  # raises the driver's own explanation
                return Probe.missing("no CUDA device/driver: cupy.cuda.is_available() is False")
            count = cp.cuda.runtime.getDeviceCount()
            if self.device_id >= count:
                return Probe.missing(f"no CUDA device {self.device_id}: {count} device(s) present")
            with cp.cuda.Device(self.device_id):
                cp.cuda.runtime.getDeviceProperties(self.device_id)
            return Probe.ok()
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError is a RuntimeError; anything else is a broken install
            return Probe.missing(cuda_missing_reason(exc, cp.__version__))

    def _cupy(self) -> Any:
        """cupy, with this backend's device made current: CuPy launches kernels (library calls and portable
        kernels alike) on the current device, whatever device their arrays are on."""
        self.require()
        cp = sys.modules["cupy"]
        if _current_device[0] != self.device_id:  # the process starts on device 0
            cp.cuda.runtime.setDevice(self.device_id)
            _current_device[0] = self.device_id
        return cp

    def _props(self) -> dict[str, Any]:
        return self._cupy().cuda.runtime.getDeviceProperties(self.device_id)

    def device_info(self) -> DeviceInfo:
        cp = self._cupy()
        p = self._props()
        rt = cp.cuda.runtime
        hip = self._is_hip()
        versions = {"cupy": cp.__version__, "runtime": _cuda_version(rt.runtimeGetVersion(), hip),
                    "driver": _cuda_version(rt.driverGetVersion(), hip)}
        extra = {"compute_capability": f"{p.get('major')}.{p.get('minor')}", "warp_size": p.get("warpSize"),
                 "shared_memory_per_block": p.get("sharedMemPerBlock"), "is_hip": hip}
        if hip:
            extra["arch"] = _text(p.get("gcnArchName"))
        return DeviceInfo(name=_text(p.get("name")), vendor="AMD" if hip else "NVIDIA", kind="gpu",
                          total_memory_bytes=p.get("totalGlobalMem"), compute_units=p.get("multiProcessorCount"),
                          clock_mhz=p["clockRate"] / 1e3 if p.get("clockRate") else None,
                          last_level_cache_bytes=p.get("l2CacheSize"), versions=versions, extra=extra)

    def capabilities(self) -> Capabilities:
        p = self._props()
        # CuPy has no bfloat16 dtype; float16 arithmetic is native from compute capability 5.3.
        return Capabilities(dtypes=("float16", "float32", "float64"), warp_size=p.get("warpSize"),
                            shared_memory_per_block=p.get("sharedMemPerBlock"),
                            max_threads_per_block=p.get("maxThreadsPerBlock"),
                            device_events=True, compiles_device_code=True)

    # -- arrays ----------------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> Any:
        cp = self._cupy()
        with cp.cuda.Device(self.device_id):
            x = cp.asarray(np.ascontiguousarray(a))
        self.meter.sample()
        return x

    def to_numpy(self, x: Any) -> np.ndarray:
        return self._cupy().asnumpy(x)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        cp = self._cupy()
        if dtype == "bfloat16":
            raise ValueError("cupy has no bfloat16 dtype")
        with cp.cuda.Device(self.device_id):
            x = cp.empty(tuple(shape), dtype=dtype)
        self.meter.sample()
        return x

    def cast(self, x: Any, dtype: str) -> Any:
        if dtype == "bfloat16":
            raise NotImplementedError("cupy has no bfloat16 dtype")
        self.require()
        return x.astype(dtype)

    # -- execution -------------------------------------------------------
    def synchronize(self) -> None:
        cp = self._cupy()
        with cp.cuda.Device(self.device_id):
            cp.cuda.runtime.deviceSynchronize()

    def timer(self) -> Timer:
        cp = self._cupy()
        return EventTimer("hip-event" if self._is_hip() else "cuda-event", new_event=cp.cuda.Event,
                          elapsed_s=lambda start, end: cp.cuda.get_elapsed_time(start, end) / 1e3,
                          synchronize=self.synchronize, scope=lambda: cp.cuda.Device(self.device_id),
                          after=self.meter.sample)

    def mode_timer(self, mode: str) -> Timer:
        """``kernel``: CUPTI's records of CuPy's kernels (NVIDIA only); ``graph``: a CUDA/HIP graph's replays."""
        from workbench.backends.cuda_timers import GraphTimer, kernel_timer

        self.require()
        if mode == "kernel":
            if self._is_hip():
                raise TimingModeUnavailable("kernel timing reads CUPTI, which ROCm does not have")
            return kernel_timer(self.synchronize)
        if mode == "graph":
            return GraphTimer(new_capture(), self.timer())
        return super().mode_timer(mode)

    # -- memory ----------------------------------------------------------
    def free_memory(self) -> None:
        gc.collect()
        if self.available:
            cp = self._cupy()
            cp.get_default_memory_pool().free_all_blocks()
            cp.get_default_pinned_memory_pool().free_all_blocks()


def _text(v: Any) -> str:
    """Device properties hold C strings as bytes."""
    return v.decode(errors="replace").rstrip("\x00") if isinstance(v, bytes) else str(v)


def _cuda_version(v: int, hip: bool) -> str:
    """13020 -> '13.2' for CUDA; HIP encodes versions differently, so keep its raw number."""
    return str(v) if hip else f"{v // 1000}.{(v % 1000) // 10}"


def discover() -> list[Backend]:
    """Device 0 only, without importing cupy: counting devices needs the driver (:func:`discover_devices`)."""
    return [CupyBackend()]


def discover_devices(base: list[Backend]) -> list[Backend]:
    """Devices 1.. where device 0 is available: none (not N unavailable ones) on a machine without a GPU."""
    if not base or not base[0].probe().available:
        return []
    try:
        count = int(sys.modules["cupy"].cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - the driver answered for device 0; if counting fails, device 0 is all we know
        return []
    return [CupyBackend(i) for i in range(1, count)]


# -- what the layers above the adapter know of CuPy -------------------------------------------------------------
def _precision_settings() -> Settings:
    """``CUPY_TF32`` where CuPy is loaded (TF32 lets a float32 matmul round its inputs to 10 bits)."""
    return {"cupy_tf32": os.environ.get("CUPY_TF32", "0")} if "cupy" in sys.modules else {}


def _array_backend(x: Any) -> str | None:
    return "cupy" if type(x).__name__ == "ndarray" else None


def _write(dev: Any, pos: np.ndarray, values: np.ndarray) -> None:
    cp = sys.modules["cupy"]
    dev.reshape(-1)[cp.asarray(pos)] = cp.asarray(values).astype(dev.dtype)


def _move(dev: Any, pos: np.ndarray, src: np.ndarray) -> None:
    cp = sys.modules["cupy"]
    flat = dev.reshape(-1)
    flat[cp.asarray(pos)] = flat[cp.asarray(src)]


#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 40
RUNTIMES = (Runtime(
    "cupy", rank=40, modules=("cupy", "cupyx"), marker="v", guards_outputs=True, distribution="cupy*",
    headline_package="cupy", key_versions=("cupy", "runtime", "driver"), device_code=DEVICE_CODE,
    packages=("cuda-python", "cuda-bindings"), package_prefixes=("cupy", "nvidia-cuda-"),
    precision_settings=_precision_settings, event_timers=("cuda-event", "hip-event"), array_backend=_array_backend,
    array_edits=ArrayEdits(writable=lambda dev: type(dev).__module__.split(".")[0] == "cupy"
                           and bool(dev.flags.c_contiguous), write=_write, move=_move),
    mode_meanings={"graph": "a CUDA/HIP graph: the launches captured once per shape on a capturing stream "
                            "(cupy.cuda.Stream.begin_capture / end_capture), inputs copied into static buffers, "
                            "Graph.launch() per call"}),)

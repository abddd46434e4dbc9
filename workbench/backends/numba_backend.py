"""Numba on the host CPU: hand-written ``@njit`` kernels over plain numpy arrays.

Arrays are numpy arrays, so moving data in and out is a copy on the host. What
numba adds is a compiler and a thread pool; both are reported in the device
info because they decide the speed of a numba variant (threading layer,
``NUMBA_NUM_THREADS``).

Memory is the process RSS high-water mark, not tracemalloc: arrays a jitted
function allocates come from numba's NRT allocator, which tracemalloc never
sees. The price is that the figure is process-wide (it includes everything
else the process touched since the last reset).

Only float32 and float64 are claimed: numba 0.68 on the CPU raises
``NotImplementedError`` for float16 arithmetic inside ``@njit`` (checked by
hand; a test pins this), and it has no bfloat16 type at all.
"""

from __future__ import annotations

import numpy as np

from workbench.backends.base import Backend, Capabilities, DeviceInfo, Probe
from workbench.backends.cpu_common import cpu_device_info
from workbench.backends.memory import HighWaterMemory
from workbench.backends.runtime import Runtime

INSTALL_HINT = "pip install numba"
#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 20
RUNTIMES = (Runtime(
    "numba", rank=20, modules=("numba",), marker="s", guards_outputs=True, distribution="numba",
    packages=("numba", "llvmlite"), headline_package="numba", key_versions=("numba", "llvmlite", "threading_layer"),
    thread_variables=("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER"),
    mode_meanings={
        "graph": "one compiled driver function (@njit) running the whole block over preallocated buffers: one "
                 "dispatch from Python instead of one per kernel",
        "fused": "hand-fused numba kernels: rmsnorm folded into the input projections, the activation into the "
                 "gate/up product, the residual add into the output projection's epilogue"}),)


class NumbaBackend(Backend):
    name = "numba"
    runtime = "numba"
    device_class = "cpu"

    def __init__(self) -> None:
        self.meter = HighWaterMemory("process-wide, includes numba NRT allocations tracemalloc cannot see")

    # -- discovery -------------------------------------------------------
    def _probe_uncached(self) -> Probe:
        return _probe_numba()

    def device_info(self) -> DeviceInfo:
        self.require()
        info = cpu_device_info().to_dict()
        info["versions"] = _numba_versions()
        info["extra"] = {**info["extra"], **_thread_settings()}
        return DeviceInfo(**info)

    def capabilities(self) -> Capabilities:
        self.require()
        return Capabilities(dtypes=("float32", "float64"))

    # -- arrays ----------------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a).copy()

    def adopt(self, a: np.ndarray) -> np.ndarray:
        return a

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x)

    def empty(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        if dtype == "bfloat16":
            raise ValueError("numba has no bfloat16 type")
        return np.empty(shape, dtype=dtype)

    def cast(self, x: np.ndarray, dtype: str) -> np.ndarray:
        if dtype == "bfloat16":
            raise NotImplementedError("numba has no bfloat16 type")
        return x.astype(dtype)

    # -- execution -------------------------------------------------------
    def synchronize(self) -> None:
        """Jitted calls return when their work (including prange loops) is done."""


def _probe_numba() -> Probe:
    try:
        import numba
    except ImportError:
        return Probe.missing(f"numba is not installed: {INSTALL_HINT}")
    except Exception as exc:  # noqa: BLE001 - e.g. a numpy too new for this numba
        return Probe.missing(f"numba failed to import ({type(exc).__name__}: {exc}); {INSTALL_HINT} --upgrade")
    if numba.config.DISABLE_JIT:  # its variants would run as plain Python under numba's name (or fail, naming nothing)
        return Probe.missing("NUMBA_DISABLE_JIT is set: numba compiles nothing, so its variants would time plain "
                             "Python under numba's name; unset NUMBA_DISABLE_JIT to use this backend")
    return Probe.ok()


def _numba_versions() -> dict[str, str]:
    import llvmlite
    import numba

    return {"numba": numba.__version__, "llvmlite": llvmlite.__version__, "numpy": np.__version__,
            "threading_layer": _threading_layer()}


def _threading_layer() -> str:
    """The active layer once a parallel kernel has run, otherwise the configured choice."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:  # no parallel function has been compiled in this process yet
        return f"{numba.config.THREADING_LAYER} (not yet chosen)"


def _thread_settings() -> dict[str, int]:
    import numba

    return {"numba_num_threads": numba.config.NUMBA_NUM_THREADS,
            "numba_active_threads": numba.get_num_threads()}


def discover() -> list[Backend]:
    return [NumbaBackend()]


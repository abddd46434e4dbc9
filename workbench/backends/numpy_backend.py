"""NumPy on the host CPU: the baseline every other backend is compared with."""

from __future__ import annotations

import numpy as np

from workbench.backends.base import Backend, Capabilities, DeviceInfo, Probe
from workbench.backends.cpu_common import cpu_device_info
from workbench.backends.memory import TracemallocMemory
from workbench.backends.runtime import Runtime

#: Where this module's backends come in every listing of backends (``workbench info``, the environment record).
LISTING_ORDER = 10
RUNTIMES = (Runtime(
    "numpy", rank=10, modules=("numpy", "scipy"), marker="o", guards_outputs=True, distribution="numpy",
    headline_package="numpy", key_versions=("numpy",),
    packages=("numpy", "scipy"),
    mode_meanings={"graph": "a preallocated out= plan: every intermediate buffer allocated once per shape, each "
                            "step writes into it (no temporaries, no allocator calls per call)"}),)


class NumpyBackend(Backend):
    name = "numpy"
    runtime = "numpy"
    device_class = "cpu"

    def __init__(self) -> None:
        self.meter = TracemallocMemory()

    def probe(self) -> Probe:
        return Probe.ok()

    def device_info(self) -> DeviceInfo:
        info = cpu_device_info()
        versions = {"numpy": np.__version__, **_blas_versions()}
        return DeviceInfo(**{**info.to_dict(), "versions": versions})

    def capabilities(self) -> Capabilities:
        return Capabilities(dtypes=("float16", "float32", "float64"))

    def from_numpy(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a).copy()

    def adopt(self, a: np.ndarray) -> np.ndarray:
        return a

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x)

    def empty(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def cast(self, x: np.ndarray, dtype: str) -> np.ndarray:
        return x.astype(dtype)

    def synchronize(self) -> None:
        pass


def _blas_versions() -> dict[str, str]:
    try:
        from threadpoolctl import threadpool_info

        return {f"blas:{p['internal_api']}": f"{p['version']} ({p['num_threads']} threads)"
                for p in threadpool_info() if p.get("user_api") == "blas"}
    except Exception:  # noqa: BLE001 - threadpoolctl is optional; no BLAS versions is an answer
        return {}


def discover() -> list[Backend]:
    return [NumpyBackend()]

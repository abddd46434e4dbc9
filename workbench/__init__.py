"""Kernel Workbench: compare compute kernels across hardware backends.

Importing this package imports no optional runtime (torch, cupy, numba,
pyopencl); adapters load them lazily when a backend is probed or used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.env_values import configure_logging
from workbench.core.threads import default_omp_wait_policy

default_omp_wait_policy()  # before any runtime loads: see workbench/core/threads.py

from workbench.core import moved as _moved  # noqa: E402

_moved.install()  # the module paths of before the layers became folders still import

from workbench import authoring as _authoring  # noqa: E402, F401  (registers the runtimes' op.numba, op.torch, ... helpers)
from workbench import execution as _execution  # noqa: E402
from workbench.backends import registry as _backends  # noqa: E402
from workbench.backends.registry import available_backends, get_backend, set_backend  # noqa: E402
from workbench.catalog import KernelSpec, get_kernel, kernels, load_catalog, register_kernel, variant, variants  # noqa: E402
from workbench.tuning import resolve as _tuning_resolve  # noqa: E402, F401  (installs tuned configurations in the catalog)
from workbench.version import __version__  # noqa: E402, F401

if TYPE_CHECKING:
    from workbench.core.record import JsonObject
    from workbench.execution.cache import CacheStats

configure_logging()


def _backend(name: str | None):
    return get_backend() if name is None else _backends.get(name)


def device_info(backend: str | None = None) -> JsonObject:
    """Device description of a backend (the current one by default)."""
    b = _backend(backend)
    b.require()
    return b.device_info().to_dict()


def memory_info(backend: str | None = None) -> JsonObject:
    """Current and peak memory of a backend, and how they were measured."""
    b = _backend(backend)
    b.require()
    return b.memory().to_dict()


def execution_stats() -> CacheStats:
    """Statistics of the shape-keyed execution cache of block variants (this process's)."""
    return _execution.execution_stats()


def clear_cache() -> None:
    """Empty the shape-keyed execution cache of block variants and zero its statistics."""
    _execution.clear_cache()


def __getattr__(name: str) -> Any:
    # Heavier entry points (harness, sweeps, UI) load on first use.
    if name == "benchmark":
        from workbench.api import benchmark

        return benchmark
    if name == "verify":
        from workbench.sweep.verification import verify

        return verify
    if name in ("timeit", "quick"):  # ad-hoc comparisons of any callables (workbench/adhoc)
        from workbench import adhoc

        return getattr(adhoc, name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


__all__ = ["KernelSpec", "available_backends", "benchmark", "clear_cache", "device_info",
           "execution_stats", "get_backend", "get_kernel",
           "kernels", "load_catalog", "memory_info", "quick", "register_kernel", "set_backend", "timeit",
           "variant", "variants", "verify"]

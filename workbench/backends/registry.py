"""Discovery of backends, automatic choice and the ``WORKBENCH_BACKEND`` override.

Built-in adapters are listed by module path with the names they provide, and
a module is imported only when a name it provides is asked for (or everything
is listed): ``bench --backends numpy`` must not import pyopencl or torch to
find numpy. Third-party adapters register through the ``workbench.backends``
entry-point group (each entry point is a zero-argument callable returning a
list of :class:`Backend`); they are loaded when a name is not a built-in's.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable
from importlib.metadata import entry_points

from .base import Backend

log = logging.getLogger(__name__)

#: Built-in adapter modules (each exposes ``discover() -> list[Backend]``) and the backend names each
#: provides: a name (also a runtime alias), or a prefix ending in ``-``.
BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "workbench.backends.numpy_backend": ("numpy",),
    "workbench.backends.numba_backend": ("numba",),
    "workbench.backends.torch_backend": ("torch", "torch-"),
    "workbench.backends.cupy_backend": ("cupy",),
    "workbench.backends.opencl_backend": ("opencl", "opencl-"),
    "workbench.backends.vulkan_backend": ("vulkan", "wgpu"),
    "workbench.backends.triton_backend": ("triton", "triton-"),
}

ENTRY_POINT_GROUP = "workbench.backends"
ENV_OVERRIDE = "WORKBENCH_BACKEND"

_cache: dict[str, Backend] | None = None  # every backend, once all_backends() has run
_modules: dict[str, list[Backend]] = {}  # built-in module -> its backends, discovered on first need
_current: Backend | None = None


def _module_backends(modname: str) -> list[Backend]:
    """One built-in module's backends, discovered once: later lookups get the same objects."""
    if modname not in _modules:
        _modules[modname] = _discover_module(modname)
    return _modules[modname]


def _discover_module(modname: str) -> list[Backend]:
    try:
        mod = importlib.import_module(modname)
        return list(mod.discover())
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not hide the other backends
        log.warning("backend module %s failed to load: %s", modname, exc)
        return []


def _discover_entry_points() -> list[Backend]:
    found: list[Backend] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.extend(ep.load()())
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the other backends
            log.warning("backend entry point %s failed: %s", ep.name, exc)
    return found


def all_backends(refresh: bool = False) -> dict[str, Backend]:
    """Every known backend, available or not, keyed by name."""
    global _cache
    if _cache is None or refresh:
        if refresh:
            _modules.clear()
        found: dict[str, Backend] = {}
        for modname in BUILTIN_MODULES:
            for b in _module_backends(modname):
                found[b.name] = b
        for b in _discover_entry_points():
            found.setdefault(b.name, b)
        _cache = found
    return _cache


def probed_backends() -> list[Backend]:
    """The backends discovered so far whose probe has run: what this process has looked at, nothing more."""
    known = _cache.values() if _cache is not None else (b for bs in _modules.values() for b in bs)
    return [b for b in known if b.probed]


def register_backend(backend: Backend) -> None:
    """Add a backend at run time (tests, notebooks)."""
    all_backends()[backend.name] = backend


def _preference(b: Backend) -> tuple[int, int, str]:
    """Priority of the device class first; within a class numpy leads, being the baseline others are compared with."""
    return (b.priority, 0 if b.runtime == "numpy" else 1, b.name)


def available_backends() -> list[str]:
    """Names of the backends that can run here, best first."""
    usable = [b for b in all_backends().values() if b.probe().available]
    usable.sort(key=_preference)
    return [b.name for b in usable]


def _best_of_runtime(backends: Iterable[Backend], runtime: str) -> Backend | None:
    """A runtime's name means its best available device."""
    return next((b for b in sorted(backends, key=_preference) if b.runtime == runtime and b.probe().available),
                None)


def _builtin_lookup(name: str) -> Backend | None:
    """``name`` among the built-in modules that provide it, importing only those."""
    for modname, names in BUILTIN_MODULES.items():
        if any(name == n or (n.endswith("-") and name.startswith(n)) for n in names):
            backends = _module_backends(modname)
            found = next((b for b in backends if b.name == name), None) or _best_of_runtime(backends, name)
            if found is not None:
                return found
    return None


def get(name: str) -> Backend:
    """Look a backend up by name; unknown names list the valid ones."""
    if _cache is None:
        found = _builtin_lookup(name)
        if found is not None:
            return found
    backends = all_backends()
    found = backends.get(name) or _best_of_runtime(backends.values(), name)
    if found is None:
        raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(sorted(backends))}")
    return found


def override_name() -> str | None:
    """``$WORKBENCH_BACKEND`` checked: None when unset or ``auto``; a name that is no backend is a ValueError
    listing the valid ones (it is never silently ignored)."""
    override = os.environ.get(ENV_OVERRIDE, "").strip()
    if not override or override == "auto":
        return None
    try:
        get(override)
    except ValueError:
        raise ValueError(f"{ENV_OVERRIDE}={override!r} names no backend; valid backends: auto, "
                         f"{', '.join(sorted(all_backends()))} (or unset it for the automatic choice)") from None
    return override


def auto_backend() -> Backend:
    """The best available backend by priority, honouring ``WORKBENCH_BACKEND``."""
    override = override_name()
    if override:
        b = get(override)
        b.require()
        return b
    names = available_backends()
    if not names:
        raise RuntimeError("no backend is available; install numpy")
    return all_backends()[names[0]]


def set_backend(name: str = "auto") -> Backend:
    global _current
    if name == "auto":
        _current = auto_backend()
    else:
        b = get(name)
        b.require()
        _current = b
    return _current


def get_backend() -> Backend:
    global _current
    if _current is None:
        _current = auto_backend()
    return _current

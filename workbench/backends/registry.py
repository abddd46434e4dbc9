"""Discovery of backends, automatic choice and the ``WORKBENCH_BACKEND`` override.

Built-in adapters are listed by module path and imported only when discovery
runs; third-party adapters register through the ``workbench.backends``
entry-point group (each entry point is a zero-argument callable returning a
list of :class:`Backend`).
"""

from __future__ import annotations

import importlib
import logging
import os
from importlib.metadata import entry_points

from .base import Backend

log = logging.getLogger(__name__)

#: Built-in adapter modules; each exposes ``discover() -> list[Backend]``.
BUILTIN_MODULES: tuple[str, ...] = (
    "workbench.backends.numpy_backend",
    "workbench.backends.numba_backend",
    "workbench.backends.torch_backend",
    "workbench.backends.cupy_backend",
    "workbench.backends.opencl_backend",
)

ENTRY_POINT_GROUP = "workbench.backends"
ENV_OVERRIDE = "WORKBENCH_BACKEND"

_cache: dict[str, Backend] | None = None
_current: Backend | None = None


def _discover_module(modname: str) -> list[Backend]:
    try:
        mod = importlib.import_module(modname)
        return list(mod.discover())
    except Exception as exc:  # an adapter bug must not hide the other backends
        log.warning("backend module %s failed to load: %s", modname, exc)
        return []


def _discover_entry_points() -> list[Backend]:
    found: list[Backend] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.extend(ep.load()())
        except Exception as exc:
            log.warning("backend entry point %s failed: %s", ep.name, exc)
    return found


def all_backends(refresh: bool = False) -> dict[str, Backend]:
    """Every known backend, available or not, keyed by name."""
    global _cache
    if _cache is None or refresh:
        found: dict[str, Backend] = {}
        for modname in BUILTIN_MODULES:
            for b in _discover_module(modname):
                found[b.name] = b
        for b in _discover_entry_points():
            found.setdefault(b.name, b)
        _cache = found
    return _cache


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


def get(name: str) -> Backend:
    """Look a backend up by name; unknown names list the valid ones."""
    backends = all_backends()
    if name in backends:
        return backends[name]
    aliases: dict[str, Backend] = {}
    for b in sorted(backends.values(), key=_preference):  # a runtime's name means its best available device
        if b.probe().available:
            aliases.setdefault(b.runtime, b)
    if name in aliases:
        return aliases[name]
    raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(sorted(backends))}")


def auto_backend() -> Backend:
    """The best available backend by priority, honouring ``WORKBENCH_BACKEND``."""
    override = os.environ.get(ENV_OVERRIDE, "").strip()
    if override and override != "auto":
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

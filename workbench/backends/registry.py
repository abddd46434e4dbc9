"""Discovery of backends, automatic choice and the ``WORKBENCH_BACKEND`` override.

Built-in adapters are this folder's ``NAME_backend.py`` modules, found by their file names (as tinygrad finds
its ``runtime/ops_*.py``). A module provides the backend names ``NAME``, ``NAME-...`` and ``NAME:...``, and is
imported only when such a name is asked for (or a runtime's name that is no module's, ``wgpu``), or
everything is listed: ``bench --backends numpy`` must not import pyopencl or torch to find numpy. Importing an
adapter module imports no runtime. Each says where its backends come in a listing (``LISTING_ORDER``).
Third-party adapters register through the ``workbench.backends`` entry-point group (each entry point is a
zero-argument callable returning a list of :class:`Backend`); they are loaded when a name is not a built-in's.

Every device is its own backend: ``torch-cuda`` (device 0, the name it always
had), ``torch-cuda:1``, ``triton-cuda:1``, ``opencl-0``,
``opencl-1`` ... ``NAME:0`` is an alias of ``NAME``. A module lists device 0
without importing its runtime (``discover``); its other devices are counted
(``discover_devices``, importing the runtime) only when a name asks for them
(``torch-cuda:1``, a pattern such as ``torch-cuda:*``) or everything is
listed, and only where device 0 is available.

What the package knows about each runtime besides its adapters (markers, versions, audit hooks ...) is
declared in the runtime's module as ``RUNTIMES`` (:class:`~workbench.backends.runtime.Runtime`) and read here:
:func:`runtime` reads only the modules that provide a name, :func:`runtimes` every one. A runtime defined
outside the package joins with :func:`register_runtime` and :func:`register_backend`.
"""

from __future__ import annotations

import fnmatch
import importlib
import logging
import os
import pkgutil
import re
from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

from workbench.backends.base import Backend
from workbench.backends.runtime import Runtime

log = logging.getLogger(__name__)

#: The file name ending of a built-in adapter module (``numpy_backend.py``), which exposes
#: ``discover() -> list[Backend]`` and declares ``RUNTIMES`` and ``LISTING_ORDER``.
ADAPTER_SUFFIX = "_backend"
#: Where a module that gives no ``LISTING_ORDER`` (or fails to import) comes: after the others.
LAST = 1000

ENTRY_POINT_GROUP = "workbench.backends"
ENV_OVERRIDE = "WORKBENCH_BACKEND"

_cache: dict[str, Backend] | None = None  # every backend, once all_backends() has run
_modules: dict[str, list[Backend]] = {}  # built-in module -> its backends, discovered on first need
_enumerated: set[str] = set()  # built-in modules whose devices 1.. have been counted
#: A device ordinal at the end of a backend name: ``torch-cuda:1``.
_ORDINAL = re.compile(r":([0-9]+)$")
#: Characters that make a backend name a pattern (``torch-cuda:*``, ``opencl-[01]``).
GLOB_CHARS = "*?["


def device_backend_name(base: str, index: int) -> str:
    """The backend name of device ``index``: ``base`` for device 0 (``torch-cuda``), ``base:N`` otherwise."""
    return base if index == 0 else f"{base}:{index}"


def canonical_name(name: str) -> str:
    """``torch-cuda:0`` -> ``torch-cuda``: device 0 keeps the runtime's plain name."""
    m = _ORDINAL.search(name)
    return name[:m.start()] if m and int(m.group(1)) == 0 else name
_current: Backend | None = None


@cache
def _adapter_modules() -> dict[str, str]:
    """Every built-in adapter module by the name its backends start with (``torch`` -> its module), from the
    folder's file names: nothing imported."""
    found = pkgutil.iter_modules([str(Path(__file__).parent)])
    return {m.name.removesuffix(ADAPTER_SUFFIX): f"{__package__}.{m.name}" for m in sorted(found, key=lambda m: m.name)
            if m.name.endswith(ADAPTER_SUFFIX)}


def _listing_order(modname: str) -> tuple[int, str]:
    try:
        return getattr(importlib.import_module(modname), "LISTING_ORDER", LAST), modname
    except Exception:  # noqa: BLE001 - reported where its backends are discovered
        return LAST, modname


def builtin_modules(modnames: Iterable[str] | None = None) -> list[str]:
    """The built-in adapter modules (or those of ``modnames``) in listing order: each imported, no runtime."""
    return sorted(_adapter_modules().values() if modnames is None else modnames, key=_listing_order)


def _providers(name: str) -> list[str]:
    """The built-in modules that may have a backend or runtime called ``name``: the module whose backends' names
    it starts (``torch-cuda:1`` -> torch's), else those that declare a runtime of that name (``wgpu``)."""
    mods = _adapter_modules()
    named = [mod for prefix, mod in mods.items() if name == prefix or name.startswith((f"{prefix}-", f"{prefix}:"))]
    if not named:
        named = [mod for mod in mods.values() if any(name in rt.names for rt in _module_runtimes(mod))]
    return builtin_modules(named)


def _module_backends(modname: str) -> list[Backend]:
    """One built-in module's backends, discovered once: later lookups get the same objects."""
    if modname not in _modules:
        _modules[modname] = _discover_module(modname)
    return _modules[modname]


def _module_devices(modname: str) -> list[Backend]:
    """One built-in module's backends with every device counted (:func:`_count_devices`)."""
    backends = _module_backends(modname)
    if modname not in _enumerated:
        _enumerated.add(modname)
        backends += _count_devices(modname, list(backends))
    return backends


def _count_devices(modname: str, base: list[Backend]) -> list[Backend]:
    """The backends of devices 1.. that ``modname.discover_devices(base)`` finds (none where it has no such
    function); never raises."""
    try:
        more = getattr(importlib.import_module(modname), "discover_devices", None)
        return list(more(base)) if more is not None else []
    except Exception as exc:  # noqa: BLE001 - device 0 stays listed
        log.warning("backend module %s failed to count its devices: %s", modname, exc)
        return []


def _discover_module(modname: str) -> list[Backend]:
    try:
        mod = importlib.import_module(modname)
        return list(mod.discover())
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not hide the other backends
        log.warning("backend module %s failed to load: %s", modname, exc)
        return []


def use_descriptions(by_module: dict[str, list[Backend]]) -> None:
    """Answer for the built-in modules in ``by_module`` with the backends given (every device counted), not by
    importing the modules' runtimes: :func:`workbench.backends.described.describe_from_cache` passes the cached
    probe's stand-ins. Modules not given are still discovered when asked for."""
    global _cache
    for modname, backends in by_module.items():
        if modname in _adapter_modules().values():
            _modules[modname] = list(backends)
            _enumerated.add(modname)
    _cache = None


def real_backend(modname: str, name: str) -> Backend | None:
    """Backend ``name`` of built-in module ``modname`` as the module itself discovers it (its runtime
    imported), whatever :func:`use_descriptions` answers for it."""
    if modname not in _real:
        found = _discover_module(modname)
        _real[modname] = found + _count_devices(modname, list(found))
    return next((b for b in _real[modname] if b.name == name), None)


_real: dict[str, list[Backend]] = {}  # built-in module -> its real backends, for described stand-ins


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
            _enumerated.clear()
        found: dict[str, Backend] = {}
        for modname in builtin_modules():
            for b in _module_devices(modname):
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
    """``name`` among the built-in modules that provide it, importing only those; a device ordinal
    (``torch-cuda:1``) counts that module's devices."""
    for modname in _providers(name):
        backends = _module_devices(modname) if _ORDINAL.search(name) else _module_backends(modname)
        found = next((b for b in backends if b.name == name), None) or _best_of_runtime(backends, name)
        if found is not None:
            return found
    return None


def is_pattern(name: str) -> bool:
    return any(c in name for c in GLOB_CHARS)


def matching(pattern: str) -> list[Backend]:
    """Every known backend (each device counted) whose name, or ``NAME:0`` alias for a device 0, matches the
    shell-style ``pattern`` (``torch-cuda:*``, ``opencl-*``, ``torch-cuda:[12]``), in device order. Only the built-in
    modules that may hold a match are imported."""
    literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    if _cache is not None or not literal:
        candidates = list(all_backends().values())
    else:
        candidates = [b for modname in builtin_modules(m for prefix, m in _adapter_modules().items()
                                                       if prefix.startswith(literal) or literal.startswith(prefix))
                      for b in _module_devices(modname)]
    return [b for b in candidates if fnmatch.fnmatchcase(b.name, pattern)
            or (getattr(b, "device_index", None) == 0 and fnmatch.fnmatchcase(f"{b.name}:0", pattern))]


def get(name: str) -> Backend:
    """Look a backend up by name; unknown names list the valid ones."""
    name = canonical_name(name)
    if _cache is None:
        found = _builtin_lookup(name)
        if found is not None:
            return found
    backends = all_backends()
    found = backends.get(name) or _best_of_runtime(backends.values(), name)
    if found is None:
        raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(sorted(backends))}")
    return found


def runtime_of(name: str) -> str | None:
    """The runtime of the backend called ``name``, or ``name`` itself where it is a runtime's name (``torch``),
    without probing any device (a report labelling 100,000 rows must not import torch or ask Vulkan for an
    adapter to learn that ``torch`` means torch); None for a name no backend has."""
    name = canonical_name(name)
    if _cache is not None:
        candidates = list(_cache.values())
    else:
        candidates = [b for modname in _providers(name) for b in _module_backends(modname)]
    exact = next((b for b in candidates if b.name == name), None)
    if exact is not None:
        return exact.runtime
    return name if any(b.runtime == name for b in candidates) else None


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


# -- runtime declarations ------------------------------------------------------------------------------------
_declared: dict[str, tuple[Runtime, ...]] = {}  # built-in module -> the runtimes it declares, read on first need
_registered: dict[str, Runtime] = {}  # runtimes declared with register_runtime, by name


def _module_runtimes(modname: str) -> tuple[Runtime, ...]:
    """The ``RUNTIMES`` a built-in module declares (importing the module, never its runtime); never raises."""
    if modname not in _declared:
        try:
            _declared[modname] = tuple(getattr(importlib.import_module(modname), "RUNTIMES", ()))
        except Exception as exc:  # noqa: BLE001 - an adapter bug must not hide the other runtimes
            log.warning("backend module %s failed to load: %s", modname, exc)
            _declared[modname] = ()
    return _declared[modname]


def register_runtime(declaration: Runtime) -> None:
    """Declare a runtime defined outside the package (a plugin, a notebook, a test), so the report, the
    environment record, the audits and ad-hoc timing treat it as they treat a built-in one. Its backends
    join with :func:`register_backend` (or the ``workbench.backends`` entry points); its variants with
    :func:`workbench.catalog.variant` naming ``declaration.name``. A built-in runtime's declaration wins over
    one registered under the same name."""
    _registered[declaration.name] = declaration


def runtimes() -> list[Runtime]:
    """Every runtime declared, the built-in modules' (each module imported, no runtime) and registered ones, by
    :attr:`~workbench.backends.runtime.Runtime.rank`."""
    built_in = [rt for modname in builtin_modules() for rt in _module_runtimes(modname)]
    taken = {rt.name for rt in built_in}
    return sorted(built_in + [rt for name, rt in _registered.items() if name not in taken], key=lambda rt: rt.rank)


def runtime(name: str) -> Runtime | None:
    """The runtime called ``name``, or whose backend family ``name`` is (``vulkan`` -> wgpu's); None for a
    name no runtime declares. Reads only the built-in modules that provide ``name``."""
    known = [rt for modname in _providers(name) for rt in _module_runtimes(modname)]
    for rt in (*known, *_registered.values()):
        if name in rt.names:
            return rt
    return None


def runtime_modules() -> dict[str, str]:
    """Top-level Python module -> the runtime whose code and arrays it holds (``scipy`` -> ``numpy``)."""
    return {module: rt.name for rt in runtimes() for module in rt.modules}

"""Which backend's synchronisation and timer an ad-hoc call needs, read from its arguments.

A GPU call returns before the device finishes, so timing it needs the runtime's synchronise (or its
events). The arguments say which runtime that is: an object of a runtime's modules goes to that runtime's
:attr:`~workbench.backends.runtime.Runtime.array_backend` (a tensor's device type, an array's device).
Types are recognised by module and class name, so nothing here imports a runtime.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.backends import registry

#: How deep nested lists, tuples and dicts of arguments are searched for arrays.
MAX_DEPTH = 3


def _module(x: Any) -> str:
    return (type(x).__module__ or "").split(".")[0]


def array_backend(x: Any) -> str | None:
    """The backend an array object belongs to (None for host data: numpy arrays, scalars, anything else)."""
    module = _module(x)
    declared = next((rt for rt in registry.runtimes() if module in rt.modules), None)
    if declared is None or declared.array_backend is None:
        return None
    return declared.array_backend(x)


def _walk(values: Iterable[Any], depth: int) -> Iterable[Any]:
    for v in values:
        yield v
        if depth < MAX_DEPTH:
            if isinstance(v, (list, tuple)):
                yield from _walk(v, depth + 1)
            elif isinstance(v, Mapping):
                yield from _walk(v.values(), depth + 1)


def backend_for(args: Iterable[Any], kwargs: Mapping[str, Any] | None = None, backend: str | None = None) -> str:
    """The backend to synchronise and time with: ``backend`` when given, else the one every device array
    among the arguments belongs to, else ``numpy`` (host code: a wall clock, no synchronisation).

    Arrays of two devices in one call are an error: it is unclear which one to wait for.
    """
    if backend is not None:
        return registry.get(backend).name  # an unknown name is a ValueError listing the valid ones
    found: dict[str, None] = {}
    for v in _walk([*args, *(kwargs or {}).values()], 0):
        name = array_backend(v)
        if name is not None:
            found[name] = None
    if len(found) > 1:
        raise ValueError(f"the arguments live on several devices ({', '.join(found)}); pass backend=... to say "
                         "which one to synchronise")
    return next(iter(found), "numpy")


#: Top-level modules of runtimes no backend here runs, as a row's ``runtime`` names them (the backends' runtimes
#: declare their own modules: :attr:`~workbench.backends.runtime.Runtime.modules`).
FOREIGN_RUNTIME_MODULES = {"jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow"}


def runtime_modules() -> dict[str, str]:
    """Top-level module -> the runtime whose code it is, as a row's ``runtime`` names it."""
    return {**registry.runtime_modules(), **FOREIGN_RUNTIME_MODULES}


def _top(name: Any) -> str:
    return str(name or "").split(".")[0]


def _runtime_of_object(obj: Any, modules: Mapping[str, str]) -> str | None:
    """The runtime an object belongs to by its own module or its class's (a numba dispatcher, a
    torch function or module, a numpy ufunc ...), from ``modules`` (:func:`runtime_modules`); None for user code."""
    for mod in (getattr(obj, "__module__", None) if not isinstance(obj, type) else None,
                *(c.__module__ for c in type(obj).__mro__ if c is not object)):
        top = _top(mod)
        if top in modules:
            return modules[top]
    return None


def _referenced_runtimes(fn: Any, modules: Mapping[str, str]) -> list[str]:
    """Runtimes a Python function's code reaches through its globals and closure (``torch.tanh(...)``,
    a numba-compiled helper), nested functions included, in the order its code names them."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    env = dict(getattr(fn, "__globals__", {}) or {})
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            env[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    found: dict[str, None] = {}
    stack = [code]
    while stack:
        c = stack.pop()
        for name in (*c.co_names, *c.co_freevars):
            if name in env:
                obj = env[name]
                rt = (modules.get(_top(obj.__name__)) if isinstance(obj, types.ModuleType)
                      else _runtime_of_object(obj, modules))
                if rt is not None:
                    found[rt] = None
        stack.extend(k for k in c.co_consts if isinstance(k, type(code)))
    return list(found)


def callable_runtime(fn: Any) -> str | None:
    """The runtime a callable's own code runs on, read without calling it: a numba dispatcher is numba, a
    torch function or ``torch.compile``'d one torch, a numpy ufunc numpy; a Python function is the runtime
    its code calls (the first other than numpy when it calls several: ``torch.from_numpy(x)`` is torch
    code). None when nothing says (the comparison's backend then names it)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    for rt in registry.runtimes():  # a compiler's wrapper (torch.compile's) whose own module is not the runtime's
        if any(getattr(fn, mark, None) is not None for mark in rt.compiled_marks):
            return rt.name
    modules = runtime_modules()
    own = _runtime_of_object(fn, modules)
    if own is not None:
        return own
    target = fn if getattr(fn, "__code__", None) is not None else type(fn).__dict__.get("__call__")
    found = _referenced_runtimes(target, modules)
    return next((r for r in found if r != "numpy"), found[0] if found else None)

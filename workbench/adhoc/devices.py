"""Which backend's synchronisation and timer an ad-hoc call needs, read from its arguments.

A GPU call returns before the device finishes, so timing it needs the runtime's synchronise (or its
events). The arguments say which runtime that is: torch tensors (their ``device.type``), CuPy arrays,
PyOpenCL arrays or buffers (their device). Types are recognised by module and class name, so nothing
here imports torch, cupy or pyopencl.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.backends import registry

#: torch ``device.type`` -> workbench backend name.
TORCH_DEVICES = {"cpu": "torch-cpu", "cuda": "torch-cuda", "mps": "torch-mps", "xpu": "torch-xpu"}
#: How deep nested lists, tuples and dicts of arguments are searched for arrays.
MAX_DEPTH = 3


def _module(x: Any) -> str:
    return (type(x).__module__ or "").split(".")[0]


def array_backend(x: Any) -> str | None:
    """The backend an array object belongs to (None for host data: numpy arrays, scalars, anything else)."""
    mod, cls = _module(x), type(x).__name__
    if mod == "torch" and hasattr(x, "device"):
        kind = getattr(x.device, "type", str(x.device))
        return TORCH_DEVICES.get(kind, f"torch-{kind}")
    if mod == "cupy" and cls == "ndarray":
        return "cupy"
    if mod == "pyopencl" and cls in ("Array", "Buffer"):
        return opencl_backend_of(x)
    return None


def opencl_backend_of(x: Any) -> str:
    """The ``opencl-N`` backend whose device holds ``x`` (an Array's queue device, or its context's)."""
    queue = getattr(x, "queue", None)
    device = getattr(queue, "device", None) if queue is not None else None
    if device is None:
        devices = getattr(getattr(x, "context", None), "devices", None) or []
        device = devices[0] if devices else None
    for b in registry.all_backends().values():
        if b.runtime == "opencl" and device is not None and getattr(b, "device", None) == device:
            return b.name
    return "opencl"


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


#: Top-level modules whose code is a runtime of its own, as a row's ``runtime`` names it.
RUNTIME_MODULES = {"numpy": "numpy", "scipy": "numpy", "numba": "numba", "torch": "torch", "cupy": "cupy",
                   "cupyx": "cupy", "pyopencl": "opencl", "triton": "triton", "wgpu": "wgpu", "jax": "jax",
                   "jaxlib": "jax", "tensorflow": "tensorflow"}


def _top(name: Any) -> str:
    return str(name or "").split(".")[0]


def _runtime_of_object(obj: Any) -> str | None:
    """The runtime an object belongs to by its own module or its class's (a numba dispatcher, a
    torch function or module, a numpy ufunc ...); None for user code."""
    for mod in (getattr(obj, "__module__", None) if not isinstance(obj, type) else None,
                *(c.__module__ for c in type(obj).__mro__ if c is not object)):
        top = _top(mod)
        if top in RUNTIME_MODULES:
            return RUNTIME_MODULES[top]
    return None


def _referenced_runtimes(fn: Any) -> list[str]:
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
                rt = (RUNTIME_MODULES.get(_top(obj.__name__)) if isinstance(obj, types.ModuleType)
                      else _runtime_of_object(obj))
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
    if getattr(fn, "_torchdynamo_orig_callable", None) is not None:  # torch.compile's wrapper
        return "torch"
    own = _runtime_of_object(fn)
    if own is not None:
        return own
    target = fn if getattr(fn, "__code__", None) is not None else type(fn).__dict__.get("__call__")
    found = _referenced_runtimes(target)
    return next((r for r in found if r != "numpy"), found[0] if found else None)

"""Audits' edits of device arrays: a few elements changed in place, an output copied the moment a call returns.

An input changed in place is the same object a variant bound its arguments to, so it cannot keep computing
from a copy it made. numpy arrays are edited here; other runtimes' arrays by the edits their runtime declares
(:attr:`~workbench.backends.runtime.Runtime.array_edits`, found by the array's top-level module); an array no
runtime can edit in place is copied whole where it has a ``set`` method, else replaced (the callers' choice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.backends import registry
from workbench.backends.runtime import ArrayEdits


def _edits(dev: Any) -> ArrayEdits | None:
    """The in-place edits the runtime of ``dev``'s type declares, where it is writable that way."""
    module = type(dev).__module__.split(".")[0]
    for rt in registry.runtimes():
        if module in rt.modules and rt.array_edits is not None:
            return rt.array_edits if rt.array_edits.writable(dev) else None
    return None


def set_whole(dev: Any, values: np.ndarray) -> bool:
    """The whole of ``values`` copied into ``dev`` (the ``set`` method of the runtimes' arrays that have one: the
    same device buffer, so a variant that bound its arguments once still reads the new values); False where
    there is no such method."""
    put = getattr(dev, "set", None)
    if not callable(put) or getattr(dev, "shape", None) != values.shape:
        return False
    try:
        put(np.ascontiguousarray(values, dtype=dev.dtype))
    except Exception:  # noqa: BLE001 - a runtime that refuses: the input is replaced instead
        return False
    return True


def write_in_place(dev: Any, pos: np.ndarray, values: np.ndarray) -> bool:
    """``dev.flat[pos] = values`` on the device, where the runtime allows; False where it does not."""
    def on_host(flat: np.ndarray) -> None:
        flat[pos] = values.astype(flat.dtype, copy=False)

    return _in_place(dev, on_host, lambda edits: edits.write(dev, pos, values))


def move_in_place(dev: Any, pos: np.ndarray, src: np.ndarray) -> bool:
    """``dev.flat[pos] = dev.flat[src]`` on the device, where the runtime allows; False where it does not."""
    def on_host(flat: np.ndarray) -> None:
        flat[pos] = flat[src]

    return _in_place(dev, on_host, lambda edits: edits.move(dev, pos, src))


def _in_place(dev: Any, on_host: Callable[[np.ndarray], None], on_device: Callable[[Any], None]) -> bool:
    """One edit of ``dev``'s elements: on a numpy array's flat view (a contiguous, writeable one), else through
    its runtime's declared edits (:attr:`~workbench.backends.runtime.Runtime.array_edits`); False where
    neither can."""
    if isinstance(dev, np.ndarray):
        if not (dev.flags.c_contiguous and dev.flags.writeable):
            return False
        on_host(dev.reshape(-1))
        return True
    edits = _edits(dev)
    if edits is None:
        return False
    on_device(edits)
    return True


def snapshot(x: Any) -> Any:
    """A copy of an output taken at once: numpy copies now; the device runtimes enqueue the copy on the current
    stream / queue (``clone`` or ``copy``), right behind the call (work left on another stream is not waited for)."""
    clone = getattr(x, "clone", None)
    if callable(clone):
        return clone()
    copy = getattr(x, "copy", None)
    return copy() if callable(copy) else x


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two host arrays hold the same bytes, in the same shape and dtype."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

"""How the value a ``setup(n)`` returns becomes a kernel spec's inputs, and back into call arguments.

``setup(n)`` returns one argument, a tuple of positional arguments or a dict of keyword arguments, as
perfplot's ``setup`` does. Arrays on the comparison's backend in its dtype (contiguous, at least 1-D)
become named spec inputs: the harness makes fresh ones per input set (``setup`` called again under a
seeded random state), rotates them between calls and checks nobody modified them. Everything else
(sizes, flags, index arrays, arrays of another dtype or device) is a constant taken from one call of
``setup`` per size in the notebook's process, so every callable and the reference see the same value.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.adhoc.devices import array_backend
from workbench.backends import registry
from workbench.backends.base import KNOWN_DTYPES
from workbench.catalog.spec import DeviceArrays
from workbench.core.dtypes import round_to

#: Runtimes whose arrays are plain numpy arrays on the host.
HOST_RUNTIMES = ("numpy", "numba")


def array_dtype(x: Any) -> str | None:
    """``x``'s dtype as a workbench dtype name (``float32``), or None when it has none we know."""
    dt = getattr(x, "dtype", None)
    name = str(dt).removeprefix("torch.") if dt is not None else None
    return name if name in KNOWN_DTYPES else None


def is_contiguous(x: Any) -> bool:
    flags = getattr(x, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    test = getattr(x, "is_contiguous", None)
    return bool(test()) if callable(test) else False


def on_backend(x: Any, backend: str, runtime: str) -> bool:
    """``x`` is an array of ``backend`` (numpy arrays belong to the host runtimes)."""
    owner = array_backend(x)
    if owner is None:
        return isinstance(x, np.ndarray) and runtime in HOST_RUNTIMES
    return owner == backend


def run_dtype(value: Any, backend: str, runtime: str) -> str:
    """The dtype of the comparison: that of the first float array of ``backend`` among the arguments
    (``float64`` when there is none: every argument is then a constant)."""
    for _, x in _items(value):
        if on_backend(x, backend, runtime) and array_dtype(x):
            return str(array_dtype(x))
    return "float64"


def _items(value: Any) -> list[tuple[Any, Any]]:
    if isinstance(value, tuple):
        return list(enumerate(value))
    if isinstance(value, Mapping):
        return list(value.items())
    return [(None, value)]


def _kind(value: Any) -> str:
    return "tuple" if isinstance(value, tuple) else "dict" if isinstance(value, Mapping) else "single"


@dataclass
class Slot:
    """One argument: a rotated array input named ``name``, or a constant ``value``."""

    key: Any  # position (tuple), keyword (dict) or None (single)
    name: str | None
    value: Any = None


@dataclass
class Layout:
    """The arguments of one size: their kind (``single``, ``tuple`` or ``dict``) and slots."""

    kind: str
    slots: list[Slot]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.slots if s.name is not None]

    def bind(self, arrays: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(args, kwargs) of a call: each input slot's array from ``arrays``, constants as they are."""
        values = [arrays[s.name] if s.name is not None else s.value for s in self.slots]
        if self.kind == "dict":
            return (), {s.key: v for s, v in zip(self.slots, values, strict=True)}
        return tuple(values), {}


def input_name(kind: str, key: Any) -> str:
    return "x" if kind == "single" else f"arg{key}" if kind == "tuple" else str(key)


def layout_of(value: Any, backend: str, runtime: str, dtype: str) -> Layout:
    """Which arguments of ``value`` are rotated inputs and which are constants (see the module's note)."""
    kind = _kind(value)
    slots = []
    for key, x in _items(value):
        rotated = (on_backend(x, backend, runtime) and array_dtype(x) == dtype and is_contiguous(x)
                   and len(getattr(x, "shape", ())) >= 1)
        slots.append(Slot(key, input_name(kind, key)) if rotated else Slot(key, None, x))
    return Layout(kind, slots)


@contextmanager
def seeded(seed: int):
    """numpy's global random state (and torch's CPU one, when torch is loaded) seeded, then restored: a
    ``setup`` drawing from ``np.random`` gives a different but reproducible input set per seed."""
    state = np.random.get_state()
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    fork = torch.random.fork_rng(devices=[]) if torch is not None else None
    try:
        if fork is not None:
            fork.__enter__()
            torch.manual_seed(seed)
        yield
    finally:
        if fork is not None:
            fork.__exit__(None, None, None)
        np.random.set_state(state)


def takes_rng(setup: Callable[..., Any]) -> bool:
    """``setup(n, rng)`` rather than ``setup(n)``: it wants the harness's seeded ``np.random.Generator``."""
    try:
        params = [p for p in inspect.signature(setup).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


def axis_of(setup: Callable[..., Any]) -> str:
    """The size axis's name: ``setup``'s first parameter (``setup(rows)`` -> ``rows``), ``n`` when it has none
    that reads as a name. Tables and plots then say ``rows=4096`` rather than ``n=4096``."""
    try:
        first = next(iter(inspect.signature(setup).parameters.values()), None)
    except (TypeError, ValueError):
        return "n"
    usable = first is not None and first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD)
    return first.name if usable and first.name.isidentifier() and not first.name.startswith("_") else "n"


def host_array(x: Any) -> np.ndarray:
    """A host copy of an array of any runtime (through its backend's ``to_numpy``), or ``np.asarray``."""
    owner = array_backend(x)
    if owner is None:
        return np.asarray(x)

    return np.asarray(registry.get(owner).to_numpy(x))


@dataclass
class AdhocSetup:
    """The spec side of a ``setup``: inputs by name per size, and the arguments they make again."""

    setup: Callable[..., Any]
    backend: str
    runtime: str
    dtype: str
    layouts: dict[int, Layout] = field(default_factory=dict)
    #: The size axis's name in the spec's parameters (:func:`axis_of`).
    axis: str = "n"

    def size(self, params: Mapping[str, int]) -> int:
        """The size ``setup`` is called with, from a cell's parameters."""
        return int(params[self.axis])

    def call(self, n: int, rng: np.random.Generator) -> Any:
        if takes_rng(self.setup):
            return self.setup(n, rng)
        with seeded(int(rng.integers(2**32))):
            return self.setup(n)

    def make_inputs(self, params: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
        """The spec's ``make_inputs``: float64 host copies of the rotated arrays of ``setup(n)``."""
        n = self.size(params)
        layout = self.layouts[n]
        value = self.call(n, rng)
        items = dict(_items(value))
        if _kind(value) != layout.kind or set(items) != {s.key for s in layout.slots}:
            raise ValueError(f"setup({n}) returned arguments of another form than on its first call "
                             f"({_kind(value)} of {len(items)}, first {layout.kind} of {len(layout.slots)})")
        return {s.name: host_array(items[s.key]).astype(np.float64) for s in layout.slots if s.name is not None}

    def native(self, host: Mapping[str, np.ndarray], n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Call arguments from float64 host inputs: each rounded to the dtype and put on the backend,
        exactly as the harness gives them to the callables."""
        be = registry.get(self.backend)
        return self.layouts[n].bind({k: be.to_device(round_to(v, self.dtype), self.dtype) for k, v in host.items()})


def outputs_of(result: Any) -> DeviceArrays:
    """A callable's result by output name: a dict as it is, a tuple or list as ``out0, out1, ...``,
    anything else as ``out``."""
    if isinstance(result, dict):
        return result
    if isinstance(result, (tuple, list)):
        return {f"out{i}": r for i, r in enumerate(result)}
    return {"out": result}

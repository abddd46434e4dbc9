"""What a kernel is (``KernelSpec``) and how it is implemented (``Variant``).

The spec is pure description — inputs, float64 reference, FLOPs, bytes,
tolerances, sizes — kept apart from the timer that runs it (as in nvbench and
triton's ``do_bench``). A variant is a builder: given a backend, parameters and a
dtype it compiles/allocates whatever it needs and returns a callable that runs
the kernel once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from workbench.catalog.tolerance import DEFAULT_TOLERANCES, Tolerance, evaluate, usable_tolerance
from workbench.core.dtypes import round_to

Params = Mapping[str, int]


class BackendLike(Protocol):
    """A backend as the catalog sees it: the adapters of :mod:`workbench.backends` (which sits above the
    catalog, so the catalog names their shape instead of importing them). A builder may use anything else an
    adapter offers (``xp``, ``device``, ...): ``__getattr__`` lets a type checker see those as ``Any``."""

    name: str
    runtime: str

    def capabilities(self) -> Any: ...

    def to_device(self, host: np.ndarray, dtype: str) -> Any: ...

    def __getattr__(self, attr: str) -> Any: ...


#: A kernel's named host arrays: what ``make_inputs`` and the float64 reference make.
Arrays = dict[str, np.ndarray]


class DeviceArray(Protocol):
    """An array on a backend's device: a numpy array, a torch tensor, a CuPy or pyopencl array, the Vulkan
    adapter's ``WgpuArray``. The catalog needs only its shape; a runtime's builders use the rest of what their
    arrays offer, which ``__getattr__`` lets a type checker see as ``Any``."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getattr__(self, attr: str) -> Any: ...


#: A kernel's named arrays on a device: the inputs or the outputs a variant's call receives.
DeviceArrays = dict[str, DeviceArray]
#: A tunable parameter's value (a tile size, an unroll factor, a block size; a choice by name).
TunableValue = int | float | str
#: Values of a variant's tunable parameters by name (``{"NB": 128, "KC": 256}``).
TunableConfig = dict[str, TunableValue]


#: What a spec may say bounds its speed: the roof its rows are scored against ("none": no roof, no % of peak).
BOUNDS = ("memory-bound", "compute-bound", "latency-bound", "none")

#: ``graph``: a multi-kernel block recorded once per shape and replayed (see ``workbench.execution``).
MODES = ("eager", "fused", "compiled", "graph")


@dataclass
class KernelSpec:
    """Description of one operation, independent of any backend."""

    name: str
    description: str
    #: Size axes the spec sweeps, e.g. ("n",), ("rows", "cols"), ("m", "n", "k").
    axes: tuple[str, ...]
    #: float64 inputs from parameters and a seeded generator (any size, odd ones too).
    make_inputs: Callable[[Params, np.random.Generator], Arrays]
    #: float64 outputs from float64 inputs.
    reference: Callable[[Arrays, Params], Arrays]
    #: Output names -> shapes (the harness allocates and poisons them).
    output_shapes: Callable[[Params], dict[str, tuple[int, ...]]]
    #: Floating-point operations per call.
    flops: Callable[[Params], float]
    #: Bytes that must move per call (compulsory traffic), given the element size.
    bytes_moved: Callable[[Params, int], float]
    #: Named size lists: "verify" (small, odd), "quick", "full", ...
    sizes: dict[str, list[dict[str, int]]]
    #: dtype -> allowed error: a number, or a function of the size params (``workbench.catalog.tolerance``).
    tolerances: dict[str, Tolerance] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    #: Output dtypes when not the compute dtype (e.g. argmax -> "int64").
    output_dtypes: dict[str, str] = field(default_factory=dict)
    #: Inputs held in their own dtype whatever the run dtype (e.g. embedding ids "int64", int8 weights "int8").
    input_dtypes: dict[str, str] = field(default_factory=dict)
    #: Map an LLM shape (batch, seq, hidden, intermediate) to this spec's params, or None.
    llm_params: Callable[[Mapping[str, int]], dict[str, int] | None] | None = None
    #: What bounds its speed, so what it is scored against (:data:`BOUNDS`): "memory-bound" (DRAM bandwidth),
    #: "compute-bound" (peak FLOP/s), "latency-bound" (a serial chain of dependent steps: ``chain``), "none".
    bound: str = "memory-bound"
    #: Optional custom comparison: (outputs, reference, inputs, params, dtype) -> (error, message).
    compare: Callable[..., tuple[float, str]] | None = None
    #: Folder the spec was loaded from (set by the loader).
    path: str | None = None
    #: Latency-bound kernels: the length of the longest chain of dependent steps one call runs (a row-wise
    #: scan: cols), from the params; their rows are scored in ns per step of that chain.
    chain: Callable[[Params], float] | None = None
    #: Which sizes the kernel has a meaning at, beyond positive integers: params -> why a size is invalid, or
    #: None (a top-k of k=8 needs cols >= 8). A size it refuses is refused by name wherever it is given.
    size_rule: Callable[[Params], str | None] | None = None

    def __post_init__(self) -> None:
        self.check_bound()
        self.check_sizes()
        self.check_tolerances()

    def check_tolerances(self) -> None:
        """Refuse a constant tolerance that checks nothing at registration (NaN, infinite, >= 1, negative):
        one of infinity verified a variant writing random numbers as ok. A size-dependent one is checked
        where it is evaluated."""
        for dtype, tol in (self.tolerances or {}).items():
            if not callable(tol):
                usable_tolerance(tol, f"kernel {self.name!r} {dtype}")

    def check_sizes(self) -> None:
        """Refuse an empty size list at registration: verifying or timing over one ran nothing and said "passed"."""
        if not isinstance(self.sizes, Mapping):
            raise ValueError(f"kernel {self.name!r}: sizes must be a dict of named size lists, got "
                             f"{type(self.sizes).__name__}")
        empty = [name for name, listed in self.sizes.items() if not isinstance(listed, (list, tuple)) or not listed]
        if empty:
            raise ValueError(f"kernel {self.name!r}: size list{'s' * (len(empty) > 1)} "
                             f"{', '.join(repr(e) for e in empty)} {'are' if len(empty) > 1 else 'is'} empty "
                             f"or not a list; each named size list needs at least one size such as "
                             f"{{{', '.join(repr(a) + ': 64' for a in self.axes)}}}")

    def check_bound(self) -> None:
        """The bound is one of :data:`BOUNDS`; a latency-bound spec says how long its chain is."""
        if self.bound not in BOUNDS:
            raise ValueError(f"kernel {self.name!r}: bound {self.bound!r} is not one of {', '.join(BOUNDS)}")
        if self.bound == "latency-bound" and self.chain is None:
            raise ValueError(f"kernel {self.name!r} is latency-bound: give chain=lambda p: <dependent steps per "
                             "call> (e.g. p['cols'] for a row-wise scan)")

    def tolerance(self, dtype: str, params: Params | None = None) -> float:
        """The allowed error of a ``dtype`` run at ``params`` (needed where the spec's tolerance depends on
        the size)."""
        return evaluate(self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype]), params,
                        f"kernel {self.name!r} {dtype}")

    def host_inputs(self, params: Params, dtype: str, seed: int = 0) -> Arrays:
        """Seeded inputs of ``params``, rounded to ``dtype`` and held in its host dtype (the values every run sees)."""
        raw = self.make_inputs(params, np.random.default_rng(seed))
        return {k: np.asarray(v).astype(self.input_dtypes[k]) if k in self.input_dtypes else round_to(v, dtype)
                for k, v in raw.items()}

    def example_inputs(self, backend: BackendLike, params: Params, dtype: str, seed: int = 0) -> DeviceArrays:
        """:meth:`host_inputs` on ``backend``'s device (cast there for bfloat16), e.g. to compile a variant.

        Here, in the spec, so that builders in the catalog need nothing from the
        layers above it (the harness builds its inputs the same way).
        """
        return {k: backend.to_device(v, dtype) for k, v in self.host_inputs(params, dtype, seed).items()}

    def validate_params(self, params: Params) -> dict[str, int]:
        missing = [a for a in self.axes if a not in params]
        extra = [k for k in params if k not in self.axes]
        if missing or extra:
            raise ValueError(
                f"kernel {self.name!r} takes sizes {self.axes}; got {dict(params)} "
                f"(missing {missing}, unexpected {extra})")
        bad = {k: v for k, v in params.items() if int(v) != v or v < 1}
        if bad:
            raise ValueError(f"kernel {self.name!r}: sizes must be positive integers, got {bad}")
        valid = {a: int(params[a]) for a in self.axes}
        why = self.size_rule(valid) if self.size_rule is not None else None
        if why:
            raise ValueError(f"kernel {self.name!r} has no meaning at {valid}: {why}")
        return valid


@dataclass
class BuildContext:
    backend: BackendLike
    params: dict[str, int]
    dtype: str
    #: The values of the variant's tunable parameters for this build (``Variant.tunables``), every one filled
    #: in: the configuration given, else the tuned one for this device, dtype and shape class, else defaults.
    config: TunableConfig = field(default_factory=dict)


@dataclass(frozen=True)
class Tunable:
    """One tunable parameter of a variant (a tile size, an unroll factor, a block size): the values worth
    trying on any machine and the hand-picked default, which must be one of them."""

    name: str
    values: tuple[TunableValue, ...]
    default: TunableValue
    description: str = ""

    def __post_init__(self) -> None:
        if not self.values or self.default not in self.values:
            raise ValueError(f"tunable {self.name!r}: default {self.default!r} is not one of {self.values}")


#: (inputs, outputs) -> outputs dict / single array / None (meaning: wrote into ``outputs``).
KernelCall = Callable[[DeviceArrays, DeviceArrays], Any]


def format_config(config: Mapping[str, TunableValue]) -> str:
    """``NB=128,KC=256``: a configuration in the form variant names and rows use."""
    return ",".join(f"{k}={v}" for k, v in config.items())


def _holds(restriction: str, config: Mapping[str, TunableValue]) -> bool:
    """A restriction evaluated over the configuration's names only (no builtins): catalog code, like the
    builders themselves."""
    return bool(eval(restriction, {"__builtins__": {}}, dict(config)))  # noqa: S307


class Unsupported(Exception):
    """Raised by a builder when a variant cannot run in this context; the message says why."""


@dataclass
class Variant:
    """One implementation of a kernel on one or more runtimes."""

    kernel: str
    name: str
    #: Runtimes (Backend.runtime values) this variant runs on.
    runtimes: tuple[str, ...]
    build: Callable[[BuildContext], KernelCall]
    mode: str = "eager"
    #: Dtypes it implements; None means every dtype the backend supports.
    dtypes: tuple[str, ...] | None = None
    description: str = ""
    #: True for the library call a user would reach for first (the default baseline).
    library: bool = False
    #: Path of the device source, for portable kernels (compile-check walks these).
    source: str | None = None
    #: Tunable parameters (Kernel Tuner's ``tune_params``); the build reads the chosen values in ``ctx.config``.
    tunables: tuple[Tunable, ...] = ()
    #: Constraints between tunables, Python expressions over their names (Kernel Tuner's ``restrictions``),
    #: e.g. ``"NB * KC <= 131072"``: a configuration breaking one is never built.
    restrictions: tuple[str, ...] = ()

    def default_config(self) -> TunableConfig:
        return {t.name: t.default for t in self.tunables}

    def check_config(self, config: Mapping[str, TunableValue]) -> TunableConfig:
        """``config`` completed with defaults; a ValueError naming the bad key and the valid choices."""
        known = {t.name: t for t in self.tunables}
        for key, value in config.items():
            if key not in known:
                raise ValueError(f"variant {self.name!r} has no tunable {key!r}; valid tunables: "
                                 f"{', '.join(known) or '(none)'}")
            if value not in known[key].values:
                raise ValueError(f"variant {self.name!r}: {key}={value!r} is not a valid choice; valid {key}: "
                                 f"{', '.join(map(str, known[key].values))}")
        full = {**self.default_config(), **config}
        broken = [r for r in self.restrictions if not _holds(r, full)]
        if broken:
            raise ValueError(f"variant {self.name!r}: configuration {format_config(full)} breaks the "
                             f"restriction{'s' * (len(broken) > 1)} {'; '.join(broken)}")
        return full

    def space(self) -> list[TunableConfig]:
        """Every configuration the tunables span that keeps the restrictions, defaults' order first."""
        import itertools

        names = [t.name for t in self.tunables]
        combos = (dict(zip(names, vals, strict=True)) for vals in itertools.product(*(t.values for t in self.tunables)))
        return [c for c in combos if all(_holds(r, c) for r in self.restrictions)]

    def unsupported_reason(self, backend: BackendLike, dtype: str) -> str | None:
        """None when this variant can run on ``backend`` in ``dtype``; otherwise why not."""
        if backend.runtime not in self.runtimes:
            return f"variant {self.name!r} runs on {', '.join(self.runtimes)}, not {backend.runtime}"
        if self.dtypes is not None and dtype not in self.dtypes:
            return f"variant {self.name!r} implements {', '.join(self.dtypes)}, not {dtype}"
        caps = backend.capabilities()
        if dtype not in caps.dtypes:
            return f"backend {backend.name!r} does not support {dtype} (supports {', '.join(caps.dtypes)})"
        return None

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
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..backends.base import Backend

Params = Mapping[str, int]
Arrays = dict[str, np.ndarray]

#: Default tolerances (error relative to the reference's magnitude) per dtype.
DEFAULT_TOLERANCES: dict[str, float] = {
    "float64": 1e-10,
    "float32": 1e-5,
    "float16": 5e-3,
    "bfloat16": 4e-2,
}

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
    tolerances: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    #: Output dtypes when not the compute dtype (e.g. argmax -> "int64").
    output_dtypes: dict[str, str] = field(default_factory=dict)
    #: Inputs held in their own dtype whatever the run dtype (e.g. embedding ids "int64", int8 weights "int8").
    input_dtypes: dict[str, str] = field(default_factory=dict)
    #: Map an LLM shape (batch, seq, hidden, intermediate) to this spec's params, or None.
    llm_params: Callable[[Mapping[str, int]], dict[str, int] | None] | None = None
    #: "memory-bound" or "compute-bound" (for plots and tutorials).
    bound: str = "memory-bound"
    #: Optional custom comparison: (outputs, reference, inputs, params, dtype) -> (error, message).
    compare: Callable[..., tuple[float, str]] | None = None
    #: Folder the spec was loaded from (set by the loader).
    path: str | None = None

    def tolerance(self, dtype: str) -> float:
        return self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype])

    def host_inputs(self, params: Params, dtype: str, seed: int = 0) -> Arrays:
        """Seeded inputs of ``params``, rounded to ``dtype`` and held in its host dtype (the values every run sees)."""
        from ..dtypes import round_to

        raw = self.make_inputs(params, np.random.default_rng(seed))
        return {k: np.asarray(v).astype(self.input_dtypes[k]) if k in self.input_dtypes else round_to(v, dtype)
                for k, v in raw.items()}

    def example_inputs(self, backend: Backend, params: Params, dtype: str, seed: int = 0) -> dict[str, Any]:
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
        return {a: int(params[a]) for a in self.axes}


@dataclass
class BuildContext:
    backend: Backend
    params: dict[str, int]
    dtype: str


#: (inputs, outputs) -> outputs dict / single array / None (meaning: wrote into ``outputs``).
KernelCall = Callable[[dict[str, Any], dict[str, Any]], Any]


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

    def unsupported_reason(self, backend: Backend, dtype: str) -> str | None:
        """None when this variant can run on ``backend`` in ``dtype``; otherwise why not."""
        if backend.runtime not in self.runtimes:
            return f"variant {self.name!r} runs on {', '.join(self.runtimes)}, not {backend.runtime}"
        if self.dtypes is not None and dtype not in self.dtypes:
            return f"variant {self.name!r} implements {', '.join(self.dtypes)}, not {dtype}"
        caps = backend.capabilities()
        if dtype not in caps.dtypes:
            return f"backend {backend.name!r} does not support {dtype} (supports {', '.join(caps.dtypes)})"
        return None

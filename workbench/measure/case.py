"""A case — one variant ready to run on seeded inputs — and the correctness check every output must pass.

The shared core of verification and the benchmark harness.

A :class:`Case` owns seeded inputs rounded to the run dtype, the float64
reference computed from exactly those rounded inputs, device copies of the
inputs, poisoned output buffers, and the built kernel call. ``check`` (from
:mod:`workbench.catalog.check`, the spec's own rules) compares a result against the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.backends import registry
from workbench.backends.base import Backend
from workbench.catalog.check import CheckResult, check, output_dtype
from workbench.catalog.reference_check import BadReference, checked_reference
from workbench.catalog.spec import (
    Arrays,
    BuildContext,
    DeviceArray,
    DeviceArrays,
    KernelCall,
    KernelSpec,
    Unsupported,
    Variant,
)
from workbench.core import placement
from workbench.core.dtypes import check_dtype

POISON = float("nan")

#: Guard elements before and after every output (64 float32 = four 64-byte cache lines each side), on the
#: runtimes that declare ``guards_outputs`` (:class:`~workbench.backends.runtime.Runtime`).
GUARD = 64


def make_host_inputs(spec: KernelSpec, params: dict[str, int], dtype: str, seed: int) -> Arrays:
    """Seeded inputs, rounded to ``dtype`` (held in its host dtype): :meth:`KernelSpec.host_inputs`."""
    return spec.host_inputs(params, dtype, seed)


def reference_outputs(spec: KernelSpec, host_inputs: Arrays, params: dict[str, int]) -> Arrays:
    """The spec's float64 reference for ``host_inputs``, checked like a variant's outputs (finite, every declared
    output of its declared shape): :class:`~workbench.catalog.reference_check.BadReference` otherwise."""
    ref = spec.reference({k: v.astype(np.float64) for k, v in host_inputs.items()}, params)
    if not isinstance(ref, dict):
        raise BadReference(f"kernel {spec.name}'s reference returned {type(ref).__name__}, not a dict of outputs")
    return checked_reference(spec, {k: np.asarray(v) for k, v in ref.items()}, params)


def poisoned(backend: Backend, shape: tuple[int, ...], dtype: str, slot: int | None = None,
             lead: int = 0) -> DeviceArray:
    """An output buffer full of NaN (or of a sentinel for integer outputs); in host memory, placed for
    ``slot`` (its element ``lead`` starts at the slot's page offset: :mod:`~workbench.core.placement`)."""
    value = -7 if dtype.startswith("int") else POISON
    if slot is not None and dtype != "bfloat16":
        adopted = backend.adopt(placement.placed_full(shape, dtype, value, slot, lead))
        if adopted is not None:
            return adopted
    if dtype.startswith("int"):
        return backend.from_numpy(np.full(shape, value, dtype=dtype))
    return backend.full(shape, dtype, value)


def guarded(backend: Backend, shape: tuple[int, ...], dtype: str,
            slot: int | None = None) -> tuple[DeviceArray | None, DeviceArray]:
    """A poisoned buffer with :data:`GUARD` extra elements on each side, and the window of its middle that
    the kernel gets as its output: ``(buffer, window)``; ``(None, plain poisoned array)`` where the backend
    cannot make such a window. In host memory the window starts at ``slot``'s place."""
    n = math.prod(shape)
    buf = poisoned(backend, (n + 2 * GUARD,), dtype, slot, lead=GUARD)
    view = backend.window(buf, GUARD, tuple(shape))
    return (buf, view) if view is not None else (None, poisoned(backend, shape, dtype, slot))


def _bits(a: np.ndarray) -> np.ndarray:
    """Each element's bytes as one row (NaN compares equal to itself bit for bit)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.size, -1) if a.size else np.zeros((0, 1), np.uint8)


def _zones(buf: np.ndarray) -> np.ndarray:
    """The bits of a guarded buffer's two guard zones (its first and last :data:`GUARD` elements), copied
    (to_numpy may share memory): comparing the whole buffer's bits, as before, cost a pass and a copy of a
    large output at every check."""
    flat = buf.reshape(-1)
    return np.concatenate([_bits(flat[:GUARD]), _bits(flat[-GUARD:])])


class Case:
    """One (spec, variant, backend, params, dtype, seed) ready to run and check."""

    def __init__(self, spec: KernelSpec, variant: Variant, backend: Backend, params: dict[str, int],
                 dtype: str, seed: int = 0):
        check_dtype(dtype)
        reason = variant.unsupported_reason(backend, dtype)
        if reason:
            raise Unsupported(reason)
        self.spec, self.variant, self.backend, self.dtype = spec, variant, backend, dtype
        self.params = spec.validate_params(params)
        self.reseed(seed)
        self.out_shapes = spec.output_shapes(self.params)
        self.poison()
        self.call: KernelCall = variant.build(BuildContext(backend=backend, params=self.params, dtype=dtype))

    def reseed(self, seed: int) -> None:
        """Fresh inputs and reference for ``seed``, keeping the built call (compiles are not repeated)."""
        self.seed = seed
        self.host_inputs = make_host_inputs(self.spec, self.params, self.dtype, seed)
        self.reference = reference_outputs(self.spec, self.host_inputs, self.params)
        self.inputs = self.device_inputs(self.host_inputs)

    @property
    def guarded(self) -> bool:
        """Outputs get guard zones on this backend: its runtime declares that a window of a larger buffer
        reaches a kernel as its output (:meth:`Backend.window`: a view; on OpenCL a sub-buffer)."""
        declared = registry.runtime(self.backend.runtime)
        return declared is not None and declared.guards_outputs

    def poison(self) -> None:
        """Fresh outputs full of NaN; where the runtime takes views, each a view into a larger buffer whose
        guard zones (:data:`GUARD` elements each side) are snapshotted for :meth:`guard_violations`."""
        self._guards: dict[str, tuple[DeviceArray, np.ndarray]] = {}
        first = len(self.host_inputs)  # outputs take the slots after the inputs'
        if not self.guarded:
            self.outputs = {k: poisoned(self.backend, s, output_dtype(self.spec, k, self.dtype), first + j)
                            for j, (k, s) in enumerate(self.out_shapes.items())}
            return
        self.outputs = {}
        for j, (k, s) in enumerate(self.out_shapes.items()):
            buf, view = guarded(self.backend, s, output_dtype(self.spec, k, self.dtype), first + j)
            self.outputs[k] = view
            if buf is not None:
                self._guards[k] = (buf, _zones(self._host(buf)))

    def _host(self, x: Any) -> np.ndarray:
        return np.asarray(self.backend.to_numpy(x))

    def guard_violations(self) -> list[str]:
        """What the last call wrote outside its outputs, from the guard zones set by :meth:`poison`."""
        if not self._guards:
            return []
        self.backend.synchronize()
        problems = []
        for name, (buf, before) in self._guards.items():
            changed = np.any(_zones(self._host(buf)) != before, axis=1)
            lo, hi = int(np.count_nonzero(changed[:GUARD])), int(np.count_nonzero(changed[GUARD:]))
            if lo:
                problems.append(f"wrote {lo} element{'s' * (lo != 1)} before the start of `{name}`")
            if hi:
                problems.append(f"wrote {hi} element{'s' * (hi != 1)} past the end of `{name}`")
        return problems

    def _same_bytes(self, value: Any, before: np.ndarray) -> bool:
        """Whether an input (read from the device, synchronized) still holds the bytes it held before."""
        if value is None:
            return False
        self.backend.synchronize()
        now = np.ascontiguousarray(self._host(value)).reshape(-1).view(np.uint8)
        return now.shape == before.shape and bool(np.array_equal(now, before))

    def input_bytes(self, inputs: DeviceArrays) -> Arrays:
        """Each input's contents as bytes (a copy, read from the device): what :meth:`run_and_check` holds a
        call's inputs to afterwards. Comparing copies byte for byte took a fraction of hashing both sides
        with blake2b (about 30 ms per 32 MiB input and check, four checks a cell)."""
        self.backend.synchronize()
        return {k: np.ascontiguousarray(self._host(v)).reshape(-1).view(np.uint8).copy() for k, v in inputs.items()}

    def run(self, inputs: DeviceArrays | None = None) -> DeviceArrays:
        """Run the kernel once; returns the device outputs (returned or written in place)."""
        result = self.call(self.inputs if inputs is None else inputs, self.outputs)
        return normalize_outputs(result, self.outputs)

    def fetch(self, outputs: DeviceArrays) -> Arrays:
        self.backend.synchronize()
        return {k: np.asarray(self.backend.to_numpy(v)) for k, v in outputs.items()}

    def run_and_check(self, inputs: DeviceArrays | None = None, host_inputs: Arrays | None = None,
                      reference: Arrays | None = None) -> CheckResult:
        """Poison, run, fetch, compare: the single verification step.

        By default on the case's own inputs; or on device ``inputs`` made from ``host_inputs`` whose
        float64 result is ``reference`` (a rotated input set). Besides the output, the check fails when
        the call wrote into a guard zone around an output or changed one of its inputs.
        """
        if inputs is None:
            inputs, host_inputs, reference = self.inputs, self.host_inputs, self.reference
        assert host_inputs is not None and reference is not None
        self.poison()
        before = self.input_bytes(inputs)
        out = self.fetch(self.run(inputs))
        problems = self.guard_violations()
        problems += [f"modified its input `{k}`" for k in before if not self._same_bytes(inputs.get(k), before[k])]
        result = check(self.spec, out, reference, self.dtype, host_inputs, self.params)
        if problems:
            msg = "; ".join(problems + ([result.message] if result.message else []))
            return CheckResult(False, float("inf") if result.passed else result.max_error, result.tolerance, msg)
        return result

    def alternate_inputs(self, seed: int) -> DeviceArrays:
        """Another input set of the same shape (the harness rotates these so answers cannot be replayed)."""
        return self.device_inputs(make_host_inputs(self.spec, self.params, self.dtype, seed))

    def device_inputs(self, host: Arrays) -> DeviceArrays:
        """Host input arrays copied to the backend (cast to bfloat16 there when needed); in host memory each
        placed for its slot, the same in every rotated set, round and run (:mod:`~workbench.core.placement`)."""
        return {k: self._placed_input(v, slot) for slot, (k, v) in enumerate(host.items())}

    def _placed_input(self, a: np.ndarray, slot: int) -> DeviceArray:
        a = np.asarray(a)
        if not (self.dtype == "bfloat16" and a.dtype.kind == "f"):  # bfloat16 is cast on the device: a copy
            adopted = self.backend.adopt(placement.placed_copy(a, slot))
            if adopted is not None:
                return adopted
        return self.backend.to_device(a, self.dtype)


def normalize_outputs(result: Any, outputs: DeviceArrays) -> DeviceArrays:
    if result is None:
        return outputs
    if isinstance(result, dict):
        unknown = [k for k in result if k not in outputs]
        if unknown and outputs:  # no outputs laid out (quick()'s callables): the reference names them, check() holds
            raise TypeError(f"variant returned outputs {unknown} the kernel does not have; its outputs are "
                            f"{list(outputs)}")
        return result
    if isinstance(result, (tuple, list)):
        if len(result) != len(outputs):  # an extra array was dropped unseen, a missing one read as unwritten
            raise TypeError(f"variant returned {len(result)} arrays but the kernel has "
                            f"{len(outputs)} output{'s' * (len(outputs) != 1)} {list(outputs)}; return one array "
                            "per output, in that order, a dict by name, or None after writing into `outputs`")
        return dict(zip(outputs, result, strict=True))
    if len(outputs) != 1:
        raise TypeError(f"variant returned one array but the kernel has outputs {list(outputs)}")
    return {next(iter(outputs)): result}

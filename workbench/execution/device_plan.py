"""A block's portable kernels on a device runtime (OpenCL, CuPy), run eagerly or as a recorded plan.

The same compiled kernels and the same launches serve both modes, so the
difference measured is the launching alone:

- eager: intermediates come from the allocator on every call and the host
  waits for each kernel before launching the next (a framework that hands each
  op's result back before the next op);
- graph on OpenCL: a pre-planned launch list — buffers allocated once per
  shape, every launch enqueued back to back on the in-order queue with no host
  synchronisation between kernels, one ``finish`` at the end;
- graph on a runtime that records device graphs (CuPy: CUDA/HIP), as its
  declaration says (:attr:`~workbench.backends.runtime.DeviceCode.new_capture`):
  the launches captured once per set of addresses and replayed. Capture needs
  a GPU; on machines without one this code is only imported and unit-checked,
  never run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.backends.runtime import GraphCapture
from workbench.catalog.spec import Unsupported
from workbench.core.dtypes import round_to
from workbench.execution.replay import ReplayTable
from workbench.portable.prelude import DTYPES
from workbench.portable.runtimes import declared_device_code, device_code
from workbench.portable.source import render

if TYPE_CHECKING:
    from workbench.catalog.spec import BuildContext, DeviceArrays

#: An argument of a launch: the name of an input, output or buffer, or an int size (passed as int32).
Arg = str | int


@dataclass(frozen=True)
class Step:
    """One kernel launch: entry point, grid in blocks, block in threads (CUDA's convention), arguments."""

    entry: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple[Arg, ...]


@dataclass
class DevicePlan:
    """The compiled launches of a block at one shape, and the shapes of its intermediate buffers."""

    ctx: BuildContext
    steps: list[Step]
    buffers: dict[str, tuple[int, ...]]
    launch: Callable[[str, tuple[int, ...], tuple[int, ...], Sequence[Any]], None]
    #: Device arrays made once per plan and read by every call (e.g. RoPE tables, as engines cache them).
    constants: DeviceArrays

    def allocate(self) -> DeviceArrays:
        """The intermediate buffers, and the constants."""
        return {**{n: self.ctx.backend.empty(s, self.ctx.dtype) for n, s in self.buffers.items()}, **self.constants}

    def bind(self, arrays: Mapping[str, Any]) -> list[tuple[Step, list[Any]]]:
        """Each step with its arguments resolved against ``arrays`` (inputs, outputs, buffers)."""
        return [(s, [arrays[a] if isinstance(a, str) else np.int32(a) for a in s.args]) for s in self.steps]


def compile_plan(ctx: BuildContext, source: str | Path, steps: list[Step], buffers: dict[str, tuple[int, ...]],
                 defines: Mapping[str, Any], constants: Mapping[str, np.ndarray] | None = None) -> DevicePlan:
    """Render and build ``source`` for the backend (cached per text and device) and upload ``constants``
    (float64 host arrays, rounded to the run dtype); raises Unsupported where the backend cannot compile
    device code or run the dtype."""
    backend, dtype = ctx.backend, ctx.dtype
    if dtype not in DTYPES:
        raise Unsupported(f"portable kernels implement {', '.join(DTYPES)}, not {dtype}")
    if not backend.capabilities().compiles_device_code:
        raise Unsupported(f"backend {backend.name} cannot compile device code here")
    code = device_code(backend)
    target = code.target(backend)
    refusal = code.refusal(backend, dtype)
    if refusal:
        raise Unsupported(refusal)
    entries = tuple(dict.fromkeys(s.entry for s in steps))
    max_block = max(int(np.prod(s.block)) for s in steps)
    launch = code.compile(backend, render(source, target, dtype, defines), entries, max_block)
    consts = {n: backend.to_device(round_to(a, dtype), dtype) for n, a in (constants or {}).items()}
    return DevicePlan(ctx, steps, buffers, launch, consts)


def eager_runner(plan: DevicePlan) -> Callable[[DeviceArrays, DeviceArrays], None]:
    """Kernel by kernel: fresh intermediates per call, the host waits after every launch."""
    backend = plan.ctx.backend

    def run(inputs: DeviceArrays, outputs: DeviceArrays) -> None:
        for step, args in plan.bind({**inputs, **outputs, **plan.allocate()}):
            plan.launch(step.entry, step.grid, step.block, args)
            backend.synchronize()

    return run


def graph_runner(plan: DevicePlan) -> Callable[[DeviceArrays, DeviceArrays], None]:
    """The recorded form for the backend's runtime: a captured device graph where it records them (CuPy), a
    launch list elsewhere (OpenCL)."""
    code = declared_device_code(plan.ctx.backend)
    if code is None or code.new_capture is None or code.address is None:
        return _launch_list(plan)
    return _graph(plan, code.new_capture(), code.address)


def _launch_list(plan: DevicePlan) -> Callable[[DeviceArrays, DeviceArrays], None]:
    buffers, backend = plan.allocate(), plan.ctx.backend
    launch = plan.launch

    def run(inputs: DeviceArrays, outputs: DeviceArrays) -> None:
        for step, args in plan.bind({**inputs, **outputs, **buffers}):
            launch(step.entry, step.grid, step.block, args)
        backend.synchronize()  # the one host synchronisation of the block

    return run


def _graph(plan: DevicePlan, capture: GraphCapture, address: Callable[[Any], int]) -> ReplayTable:
    """The launches captured once per set of input and output addresses (:class:`ReplayTable`), replayed."""
    buffers = plan.allocate()

    def record(inputs: DeviceArrays, outputs: DeviceArrays) -> Callable[[], None]:
        bound = plan.bind({**inputs, **outputs, **buffers})

        def launch_all() -> None:  # pragma: no cover - GPU
            for step, args in bound:
                plan.launch(step.entry, step.grid, step.block, args)

        return capture(launch_all)

    return ReplayTable(record, address)

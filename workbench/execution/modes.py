"""Execution modes of multi-kernel blocks, and the builder that routes ``graph`` / ``fused`` through the cache.

- ``eager``: kernel by kernel, each launched and synchronised as a framework
  would; no cache, nothing recorded.
- ``graph``: the block's sequence is recorded once per shape and replayed. What
  a recording is differs per runtime (:data:`GRAPH_MEANING`): a real CUDA/HIP
  graph on GPUs, and on CPUs the honest analogue that removes the same
  overheads — per-kernel dispatch, allocation and host synchronisation.
- ``fused``: fewer kernels than eager (:data:`FUSED_MEANING`); a compiler's
  whole-block fusion where the runtime has one. A fused recording that fails
  falls back to eager and is counted.

Both recorded modes go through :class:`~workbench.execution.cache.ExecutionCache`.
The builder makes the first call itself, on the run's shapes, so the
recording (capture, plan, compile) happens while building — never in a timed
call — and every call the harness makes is a hit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from workbench.backends import registry
from workbench.execution.cache import CacheKey, Runner, execution_cache

if TYPE_CHECKING:
    from workbench.catalog.authoring import KernelFolder
    from workbench.catalog.spec import BuildContext, DeviceArrays

class ModeMeanings(Mapping[str, str]):
    """Runtime -> what an execution mode means on it, as each runtime's module declares it
    (:attr:`~workbench.backends.runtime.Runtime.mode_meanings`). Read when asked: reading every declaration
    imports every adapter module, which ``import workbench`` must not."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def _table(self) -> dict[str, str]:
        return {rt.name: rt.mode_meanings[self.mode] for rt in registry.runtimes() if self.mode in rt.mode_meanings}

    def __getitem__(self, runtime: str) -> str:
        return self._table()[runtime]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


#: What ``graph`` means on each runtime (the README's "Execution modes" table says the same).
GRAPH_MEANING = ModeMeanings("graph")
#: What ``fused`` means on each runtime.
FUSED_MEANING = ModeMeanings("fused")


def cached_build(op: KernelFolder, name: str, mode: str, record: Callable[[BuildContext], Runner],
                 eager: Callable[[BuildContext], Runner] | None = None) -> Callable[[BuildContext], Runner]:
    """A catalog builder for block variant ``name`` in ``mode`` (``graph`` or ``fused``).

    ``record(ctx)`` captures / plans / compiles the block for ``ctx``'s shape
    and returns its runner (raise ``Unsupported`` when it cannot run here);
    ``eager(ctx)`` is the fallback of a failed fused recording.
    """
    def build(ctx: BuildContext) -> Runner:
        key = CacheKey.of(op.name, name, ctx.backend.name, ctx.params, ctx.dtype)
        cache = execution_cache()
        recorder = lambda: record(ctx)  # noqa: E731 - bound to this context
        fallback = (lambda: eager(ctx)) if eager is not None else None

        def run(inputs: DeviceArrays, outputs: DeviceArrays) -> Any:
            return cache.run(key, mode, recorder, inputs, outputs, fallback)

        _first_call(op, ctx, run)
        return run

    build.__module__, build.__qualname__ = record.__module__, f"{record.__qualname__}.build"
    build.__doc__ = record.__doc__
    return build


def register_cached(op: KernelFolder, name: str, runtimes: str | tuple[str, ...], mode: str,
                    record: Callable[[BuildContext], Runner], eager: Callable[[BuildContext], Runner] | None = None,
                    description: str = "", dtypes: tuple[str, ...] | None = None, source: str | None = None) -> None:
    """Register :func:`cached_build` as variant ``name`` of ``op`` on ``runtimes``."""
    op.variant(name, runtimes, mode=mode, dtypes=dtypes, source=source,
               description=description or (record.__doc__ or "").strip())(cached_build(op, name, mode, record, eager))


def _first_call(op: KernelFolder, ctx: BuildContext, run: Runner) -> None:
    """The recording call, on the run's shapes (seed 0) into scratch outputs, then a device sync."""
    spec = op.spec
    inputs = spec.example_inputs(ctx.backend, ctx.params, ctx.dtype, seed=0)
    outputs = {n: ctx.backend.empty(tuple(s), spec.output_dtypes.get(n, ctx.dtype))
               for n, s in spec.output_shapes(ctx.params).items()}
    run(inputs, outputs)
    ctx.backend.synchronize()

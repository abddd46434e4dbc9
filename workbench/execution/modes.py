"""Execution modes of multi-kernel blocks, and the builder that routes ``graph`` / ``fused`` through the cache.

- ``eager``: kernel by kernel, each launched and synchronised as a framework
  would; no cache, nothing recorded.
- ``graph``: the block's sequence is recorded once per shape and replayed. What
  a recording is differs per runtime (:data:`GRAPH_MEANING`): a real CUDA/HIP
  graph on GPUs, and on CPUs the honest analogue that removes the same
  overheads — per-kernel dispatch, allocation and host synchronisation.
- ``fused``: fewer kernels than eager (:data:`FUSED_MEANING`); torch.compile on
  torch. A fused recording that fails falls back to eager and is counted.

Both recorded modes go through :class:`~workbench.execution.cache.ExecutionCache`.
The builder makes the first call itself, on the run's shapes, so the
recording (capture, plan, compile) happens while building — never in a timed
call — and every call the harness makes is a hit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.execution.cache import CacheKey, Runner, execution_cache

if TYPE_CHECKING:
    from workbench.catalog.authoring import KernelFolder
    from workbench.catalog.spec import BuildContext

#: What ``graph`` means on each runtime (the README's "Execution modes" table says the same).
GRAPH_MEANING: dict[str, str] = {
    "numpy": "a preallocated out= plan: every intermediate buffer allocated once per shape, each step writes "
             "into it (no temporaries, no allocator calls per call)",
    "numba": "one compiled driver function (@njit) running the whole block over preallocated buffers: one "
             "dispatch from Python instead of one per kernel",
    "torch": "on CUDA/HIP: torch.cuda.CUDAGraph captured once per shape, inputs copied into its static buffers "
             "and replayed; on the CPU: a preallocated out= plan (every op writes into a buffer allocated once)",
    "opencl": "a pre-planned launch list: kernels built, arguments bound and buffers allocated once per shape, "
              "all launches enqueued with no host synchronisation between them and one finish at the end",
    "cupy": "a CUDA/HIP graph: the launches captured once per shape on a capturing stream "
            "(cupy.cuda.Stream.begin_capture / end_capture), inputs copied into static buffers, "
            "Graph.launch() per call",
}
#: What ``fused`` means on each runtime.
FUSED_MEANING: dict[str, str] = {
    "numba": "hand-fused numba kernels: rmsnorm folded into the input projections, the activation into the "
             "gate/up product, the residual add into the output projection's epilogue",
    "torch": "torch.compile (inductor) of the whole block, compiled once per shape",
}


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

        def run(inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
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

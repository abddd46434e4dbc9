"""Portable device sources on PyOpenCL: built for the backend's device and launched on its in-order queue.

A launch takes CUDA's convention (a grid in blocks, a block in threads) and enqueues ``global = grid * block``,
``local = block``. Programs are cached per (context, device, rendered text, options), so every size of a sweep
reuses one build. PyOpenCL is imported only when one of these runs, never at ``import workbench``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.backends.runtime import DeviceCode, Launcher
from workbench.catalog.spec import Unsupported

#: OpenCL build options: none, in particular no fast-math (results are checked against float64).
OPENCL_OPTIONS: tuple[str, ...] = ()

_programs: dict[tuple[int, int, str, tuple[str, ...]], Any] = {}  # (context, device, text, options) -> its Program


def compile_source(backend: Any, text: str, entries: Sequence[str], max_block: int) -> Launcher:
    """Build ``text`` for the backend's OpenCL device; return a launcher for ``entries``."""
    import pyopencl as cl
    import pyopencl.array as cla

    key = (backend.ctx.int_ptr, backend.device.int_ptr, text, OPENCL_OPTIONS)
    program = _programs.get(key)
    if program is None:
        try:
            program = cl.Program(backend.ctx, text).build(options=list(OPENCL_OPTIONS), devices=[backend.device])
        except cl.RuntimeError as exc:  # the message carries the build log, with #line-mapped file:line
            raise RuntimeError(f"OpenCL build failed on {backend.device.name}: {exc}") from None
        _programs[key] = program
    kernels = {e: cl.Kernel(program, e) for e in entries}
    for name, k in kernels.items():
        limit = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, backend.device)
        if max_block > limit:
            raise Unsupported(f"kernel {name} allows {limit} work-items per group on this device, "
                              f"the variant launches {max_block}")
    queue = backend.queue

    def launch(entry: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any]) -> None:
        k = kernels[entry]
        k.set_args(*(a.data if isinstance(a, cla.Array) else a for a in args))
        cl.enqueue_nd_range_kernel(queue, k, tuple(g * b for g, b in zip(grid, block, strict=False)), block)

    return launch


def refusal(backend: Any, dtype: str) -> str | None:
    """A device without ``cl_khr_fp64`` runs no float64."""
    if dtype == "float64" and not backend.device.double_fp_config:
        return f"OpenCL device {backend.device.name} has no cl_khr_fp64"
    return None


DEVICE_CODE = DeviceCode(targets=("opencl",), target=lambda backend: "opencl", compile=compile_source,
                         refusal=refusal)

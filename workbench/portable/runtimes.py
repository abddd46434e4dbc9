"""Compile and launch rendered portable sources on CuPy (CUDA/HIP) and PyOpenCL.

Each runtime is two small pieces: a cached compile of one rendered text on one
device, and a launcher taking a grid in blocks plus a block in threads (CUDA's
convention; OpenCL gets ``global = grid * block``, ``local = block``). Programs
are cached per (rendered text, options, device), so every size of a sweep
reuses one compile. Runtime packages are imported here, lazily, never at
``import workbench``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.catalog.spec import Unsupported

#: NVRTC / hipRTC options; the sources are C99-flavoured but compile as C++17.
CUPY_OPTIONS: tuple[str, ...] = ("-std=c++17",)
#: OpenCL build options: none, in particular no fast-math (results are checked against float64).
OPENCL_OPTIONS: tuple[str, ...] = ()

_programs: dict[tuple, Any] = {}

Launcher = Callable[[str, tuple[int, ...], tuple[int, ...], Sequence[Any]], None]


def target_of(backend) -> str:
    """The prelude target for a backend: ``opencl``, or ``cuda`` / ``hip`` for CuPy."""
    if backend.runtime == "opencl":
        return "opencl"
    if backend.runtime == "cupy":
        import cupy

        return "hip" if cupy.cuda.runtime.is_hip else "cuda"
    raise Unsupported(f"portable kernels run on the cupy and opencl runtimes, not {backend.runtime}")


def opencl_launcher(backend, text: str, entries: Sequence[str], max_block: int) -> Launcher:
    """Build ``text`` for the backend's OpenCL device; return a launcher for ``entries``."""
    import pyopencl as cl
    import pyopencl.array as cla

    key = ("opencl", backend.ctx.int_ptr, backend.device.int_ptr, text, OPENCL_OPTIONS)
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


def cupy_launcher(backend, text: str, entries: Sequence[str], max_block: int) -> Launcher:
    """Compile ``text`` with NVRTC (hipRTC on ROCm) through ``cupy.RawModule``; return a launcher."""
    import cupy

    device_id = getattr(backend, "device_id", 0)
    key = ("cupy", device_id, text, CUPY_OPTIONS)
    with cupy.cuda.Device(device_id):
        module = _programs.get(key)
        if module is None:
            module = cupy.RawModule(code=text, options=CUPY_OPTIONS)
            module.compile()  # errors surface at build time, not at the first launch
            _programs[key] = module
        functions = {e: module.get_function(e) for e in entries}
    for name, f in functions.items():
        if max_block > f.max_threads_per_block:
            raise Unsupported(f"kernel {name} allows {f.max_threads_per_block} threads per block on this "
                              f"device, the variant launches {max_block}")

    def launch(entry: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any]) -> None:
        with cupy.cuda.Device(device_id):
            functions[entry](grid, block, tuple(args))

    return launch


def launcher(backend, text: str, entries: Sequence[str], max_block: int) -> Launcher:
    if backend.runtime == "opencl":
        return opencl_launcher(backend, text, entries, max_block)
    return cupy_launcher(backend, text, entries, max_block)

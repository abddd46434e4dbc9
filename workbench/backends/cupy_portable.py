"""Portable device sources on CuPy: compiled with NVRTC (hipRTC on ROCm), launched, and recorded as graphs.

The compile is cached per (device, rendered text, options), so every size of a sweep reuses one
:class:`cupy.RawModule`. A block's launches are recorded as a CUDA/HIP graph: captured on a stream of their own
and replayed on the current one. CuPy is imported only when one of these runs, never at ``import workbench``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.backends.runtime import DeviceCode, GraphCapture, Launcher
from workbench.catalog.spec import Unsupported

#: NVRTC / hipRTC options; the sources are C99-flavoured but compile as C++17.
CUPY_OPTIONS: tuple[str, ...] = ("-std=c++17",)

_modules: dict[tuple[int, str, tuple[str, ...]], Any] = {}  # (device, text, options) -> its compiled RawModule


def target(backend: Any) -> str:
    """``hip`` under ROCm, ``cuda`` otherwise."""
    import cupy

    return "hip" if cupy.cuda.runtime.is_hip else "cuda"


def compile_source(backend: Any, text: str, entries: Sequence[str], max_block: int) -> Launcher:
    """Compile ``text`` with NVRTC (hipRTC on ROCm) through ``cupy.RawModule``; return a launcher."""
    import cupy

    device_id = getattr(backend, "device_id", 0)
    key = (device_id, text, CUPY_OPTIONS)
    with cupy.cuda.Device(device_id):
        module = _modules.get(key)
        if module is None:
            module = cupy.RawModule(code=text, options=CUPY_OPTIONS)
            module.compile()  # errors surface at build time, not at the first launch
            _modules[key] = module
        functions = {e: module.get_function(e) for e in entries}
    for name, f in functions.items():
        if max_block > f.max_threads_per_block:
            raise Unsupported(f"kernel {name} allows {f.max_threads_per_block} threads per block on this "
                              f"device, the variant launches {max_block}")

    def launch(entry: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any]) -> None:
        with cupy.cuda.Device(device_id):
            functions[entry](grid, block, tuple(args))

    return launch


def new_capture() -> GraphCapture:  # pragma: no cover - GPU
    """A capture on a non-blocking stream of its own: the launches recorded as a CUDA/HIP graph, replayed
    with ``Graph.launch`` on the current stream."""
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)

    def capture(launch_all: Callable[[], None]) -> Callable[[], None]:
        with stream:
            stream.begin_capture()
            try:
                launch_all()
            finally:
                graph = stream.end_capture()
        return lambda: graph.launch(cupy.cuda.get_current_stream())

    return capture


DEVICE_CODE = DeviceCode(targets=("cuda", "hip"), target=target, compile=compile_source, new_capture=new_capture,
                         address=lambda a: a.data.ptr)

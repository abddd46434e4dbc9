"""Timing modes ``kernel`` and ``graph`` on CUDA (and ``graph`` on HIP), for every runtime that launches there.

``kernel``: the kernels a call launched, from the first one's start to the last one's end, read from CUPTI
activity records — through ``cupti-python`` (``pip install cupti-python``) where it is installed, else through
torch's profiler (Kineto, CUPTI underneath). Either sees every kernel of the process, CuPy's and Triton's
included, so launch gaps and the launcher's host time stay out (FlashInfer's ``bench_gpu_time`` times the same
way; tritonbench calls it ``cuda_time``). ``graph``: a sample's calls captured once as a CUDA/HIP graph and
replayed between events (tritonbench's ``cudagraph``, ``triton.testing.do_bench_cudagraph``).

Nothing here imports a runtime at module load; each timer imports its package when it is made.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from workbench.backends.base import Sample, Timer, TimingModeUnavailable

_clock = time.perf_counter
CUPTI_HINT = "pip install cupti-python (or a CUDA build of torch, whose profiler reads CUPTI)"


def kernel_span_s(spans: Sequence[tuple[int, int]]) -> float:
    """Seconds from the first kernel's start to the last one's end, of (start_ns, end_ns) records."""
    if not spans:
        raise RuntimeError("no kernel ran on the device during the call (kernel timing mode needs at least one "
                           "kernel per call; time a host-only call with --timing-mode launch)")
    return (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e9


class _CuptiRecords:
    """CUPTI's concurrent-kernel activity records, collected once per process (CUPTI allows one subscriber)."""

    _lock = threading.Lock()
    _made: _CuptiRecords | None = None

    def __init__(self, cupti: Any) -> None:
        self.cupti = cupti
        self.spans: list[tuple[int, int]] = []
        cupti.activity_register_callbacks(lambda: (8 << 20, 0), self._completed)
        cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)

    def _completed(self, activities: list[Any]) -> None:
        self.spans.extend((int(a.start), int(a.end)) for a in activities)

    @classmethod
    def get(cls) -> _CuptiRecords:
        with cls._lock:
            if cls._made is None:
                cls._made = cls(importlib.import_module("cupti.cupti"))
            return cls._made

    def take(self) -> list[tuple[int, int]]:
        self.cupti.activity_flush_all(1)
        spans, self.spans = self.spans, []
        return spans


class CuptiKernelTimer(Timer):
    """``kernel`` mode through cupti-python's activity API."""

    kind = "cupti-kernel"
    timing_mode = "kernel"

    def __init__(self, synchronize: Callable[[], None]):
        self._sync = synchronize
        self._records = _CuptiRecords.get()

    def measure(self, fn: Callable[[], Any]) -> Sample:
        self._sync()
        self._records.take()  # records of earlier work (a flush, the warm-up) are not this call's
        t0 = _clock()
        fn()
        t1 = _clock()
        self._sync()
        return Sample(device_s=kernel_span_s(self._records.take()), host_s=t1 - t0)


class TorchProfilerKernelTimer(Timer):
    """``kernel`` mode through torch's profiler (one profiling session per sample, outside the kernels' span)."""

    kind = "torch-profiler-kernel"
    timing_mode = "kernel"

    def __init__(self, synchronize: Callable[[], None]):
        self._sync = synchronize
        self._torch = sys.modules["torch"]

    def measure(self, fn: Callable[[], Any]) -> Sample:
        prof = self._torch.profiler
        self._sync()
        with prof.profile(activities=[prof.ProfilerActivity.CUDA]) as p:
            t0 = _clock()
            fn()
            t1 = _clock()
            self._sync()
        cuda = self._torch.autograd.DeviceType.CUDA
        spans = [(e.start_ns(), e.start_ns() + e.duration_ns()) for e in p.profiler.kineto_results.events()
                 if e.device_type() == cuda]
        return Sample(device_s=kernel_span_s(spans), host_s=t1 - t0)


def kernel_timer(synchronize: Callable[[], None]) -> Timer:
    """cupti-python's timer where it imports, else torch's profiler where torch has CUDA; else the reason."""
    try:
        return CuptiKernelTimer(synchronize)
    except ImportError:
        cupti_why = "cupti-python is not installed"
    except Exception as exc:  # noqa: BLE001 - CUPTI present but refusing (another subscriber, old driver)
        cupti_why = f"cupti-python failed ({type(exc).__name__}: {exc})"
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise TimingModeUnavailable(f"{cupti_why}, and torch is not installed ({CUPTI_HINT})") from None
    if not getattr(torch.version, "cuda", None):
        raise TimingModeUnavailable(f"{cupti_why}, and torch {torch.__version__} has no CUDA profiler "
                                    f"({CUPTI_HINT})")
    return TorchProfilerKernelTimer(synchronize)


class GraphTimer(Timer):
    """``graph`` mode: each sample's function (its ``k`` calls) captured once as a device graph, then replayed
    between two events. :meth:`prepare` captures ahead of timing, so a call that cannot be captured (it
    synchronises, or allocates on a stream being captured) is found before the loop, not in it."""

    kind = "graph-replay"
    timing_mode = "graph"

    def __init__(self, capture: Callable[[Callable[[], None]], Callable[[], None]], events: Timer):
        self._capture, self._events = capture, events
        self._replays: dict[int, tuple[Callable[[], Any], Callable[[], None]]] = {}

    def prepare(self, fn: Callable[[], Any]) -> Callable[[], None]:
        held = self._replays.get(id(fn))
        if held is None or held[0] is not fn:
            held = self._replays[id(fn)] = (fn, self._capture(fn))
        return held[1]

    def measure(self, fn: Callable[[], Any]) -> Sample:
        return self._events.measure(self.prepare(fn))


def torch_graph_capture(torch: Any) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """torch's CUDA graph capture (``torch.cuda.graph`` on a side stream, warmed as torch asks)."""
    def capture(fn: Callable[[], None]) -> Callable[[], None]:  # pragma: no cover - GPU
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        return graph.replay
    return capture

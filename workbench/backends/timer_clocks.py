"""What each timer kind reads, in words: the clock behind a row's time (``timer_kind``), said beside its timing mode.

A row's timing mode names the span it holds (``host`` on a CPU device: the whole call), not the clock that read
it. Tutorial 02 said "`host` on a CPU device, whatever its timer" beside opencl-0 and vulkan, whose timers are
the device's own timestamps (PoCL's OpenCL profiling, lavapipe's Vulkan timestamps): a reader took "host" for
the host's clock. :func:`mode_and_clock` puts both in one label.
"""

from __future__ import annotations

#: The one timer kind that reads the host's clock (the harness audit's host-clock timers are these).
HOST_CLOCK_TIMERS = ("sync+perf_counter",)

#: Each timer kind the package's timers record, and what it reads.
CLOCKS: dict[str, str] = {
    "sync+perf_counter": "the host's clock (perf_counter) around the call, the device synchronised before and after",
    "cuda-event": "CUDA events recorded on the stream around the call (the device's clock)",
    "hip-event": "HIP events recorded on the stream around the call (the device's clock)",
    "torch-event": "torch's device events recorded on the current stream around the call (the device's clock)",
    "opencl-profiling": "OpenCL profiling timestamps of markers queued before and after the call (the device's "
                        "clock)",
    "wgpu-timestamp": "timestamps the device writes into its queue before and after the call's submissions (the "
                      "device's clock)",
    "cupti-kernel": "the first kernel's start to the last one's end, from CUPTI activity records (the device's "
                    "clock)",
    "torch-profiler-kernel": "the first kernel's start to the last one's end, from torch's profiler (CUPTI "
                             "underneath; the device's clock)",
    "graph-replay": "device events around a replayed CUDA/HIP graph of the calls (the device's clock)",
}


def reads_host_clock(kind: str | None) -> bool:
    """Whether a timer of ``kind`` reads the host's clock (False for a device timer, and for an unknown kind)."""
    return kind in HOST_CLOCK_TIMERS


def timer_clock(kind: str | None) -> str:
    """What a timer of ``kind`` reads, in words; an unknown kind is said to be one."""
    if not kind:
        return "no timer recorded"
    return CLOCKS.get(kind, f"{kind}, a timer kind this package does not describe")


def mode_and_clock(mode: str | None, kind: str | None) -> str:
    """A row's timing mode with the clock that read it: "host span, host clock (sync+perf_counter)", "host span,
    device clock (opencl-profiling)", "kernel span, device clock (cupti-kernel)". Never the bare mode name, which
    reads as the clock where the clock is the device's."""
    span = f"{mode} span" if mode else "span not recorded"
    if not kind:
        return f"{span}, timer not recorded"
    clock = "host clock" if reads_host_clock(kind) else "device clock" if kind in CLOCKS else "clock unknown"
    return f"{span}, {clock} ({kind})"

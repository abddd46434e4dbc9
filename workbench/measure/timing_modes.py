"""Which time a row holds: its timing mode (``host``, ``launch``, ``kernel``, ``graph``), chosen once per visit.

A CPU backend has one time, ``host``. On a GPU the default prefers ``kernel`` (the kernels a call launched,
from CUPTI: launch gaps and a launcher's host time stay out, as in FlashInfer's ``bench_gpu_time``), then
``graph`` (a replayed CUDA graph, as ``do_bench_cudagraph``), then ``launch`` (events around each call: what
every GPU row was before, launch gaps included); tritonbench names the same three latency modes. Whatever it
gets, the choice says why, and the row keeps the mode: two modes are never judged against each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.backends.base import Backend, SyncWallTimer, Timer, TimingModeUnavailable
from workbench.core.record import TIMING_MODES
from workbench.measure.timer import TimingConfig

#: A GPU's default order.
GPU_PREFERENCE = ("kernel", "graph", "launch")


@dataclass(frozen=True)
class ModeChoice:
    """The timing mode a visit got, its timer, and a note saying which and why (a row's message keeps it)."""

    mode: str
    timer: Timer
    note: str


def on_cpu(backend: Backend) -> bool:
    return getattr(backend, "device_class", "cpu") == "cpu"


def timing_mode_of(backend: Backend, timer: Timer) -> str:
    """The mode a timer's samples are in: its own where it declares one, else ``host`` on a CPU and ``launch``
    on a device (events, or a synchronised clock, around each call)."""
    declared = getattr(timer, "timing_mode", None)
    if declared in TIMING_MODES:
        return declared
    return "host" if on_cpu(backend) else "launch"


def choose_timer(backend: Backend, asked: str | None) -> ModeChoice:
    """The timer of mode ``asked`` (None: the default), falling back to ``launch`` where the backend cannot."""
    if asked is not None and asked not in TIMING_MODES:
        raise ValueError(f"unknown timing mode {asked!r}; valid timing modes: {', '.join(TIMING_MODES)}")
    if on_cpu(backend):
        why = f" (asked for {asked}: {backend.name} runs on the CPU, whose only time is host time)" if asked not in (
            None, "host") else ""
        return ModeChoice("host", backend.timer(), f"timing mode host{why}" if why else "")
    if asked == "host":
        return ModeChoice("host", SyncWallTimer(backend.synchronize),
                          "timing mode host (asked for): synchronise, call, synchronise, on the host's clock")
    order = GPU_PREFERENCE if asked is None else (asked,)
    refused: list[str] = []
    for mode in order:
        if mode == "launch":
            break
        try:
            timer = backend.mode_timer(mode)
        except TimingModeUnavailable as exc:
            refused.append(f"{mode}: {exc}")
            continue
        how = "asked for" if asked else "the GPU default, preferred to graph and launch" if mode == "kernel" else (
            "the GPU default: " + "; ".join(refused))
        return ModeChoice(mode, timer, f"timing mode {mode} ({how}; timer {timer.kind})")
    timer = backend.timer()
    why = "; ".join(refused) if refused else "asked for"
    lead = f"asked for {asked}, unavailable: " if asked not in (None, "launch") else ""
    return ModeChoice(timing_mode_of(backend, timer), timer, f"timing mode launch ({lead}{why}; timer {timer.kind})")


def settle(choice: ModeChoice, backend: Backend, call: Callable[[], Any]) -> ModeChoice:
    """A ``graph`` choice whose call cannot be captured (it synchronises, or allocates while captured) falls back
    to ``launch`` before the loop, saying why; any other choice is kept."""
    prepare = getattr(choice.timer, "prepare", None)
    if choice.mode != "graph" or prepare is None:
        return choice
    try:
        prepare(call)
    except Exception as exc:  # noqa: BLE001 - any capture failure: the call is timed in launch mode instead
        backend.synchronize()
        timer = backend.timer()
        return ModeChoice(timing_mode_of(backend, timer), timer,
                          f"timing mode launch (graph capture failed: {type(exc).__name__}: {exc}; timer {timer.kind})")
    return choice


def sample_config(mode: str, config: TimingConfig) -> TimingConfig:
    """The loop's config for a timer of ``mode``: in ``kernel`` mode a sample is one call (``min_sample_s`` 0).

    Why: a kernel-mode sample is its kernels' first start to last end, so a sample of k calls would hold the k-1
    launch gaps between them — the very time kernel mode leaves out (FlashInfer's ``bench_gpu_time`` reads one
    iteration's kernels at a time). CUPTI's nanosecond timestamps need no batching for resolution."""
    return dataclasses.replace(config, min_sample_s=0.0) if mode == "kernel" else config

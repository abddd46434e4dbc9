"""A GPU cell's visit around its timed loop: clocks brought up first, a budget of its own, samples dropped below
the clock, the clocks of the round recorded, the cache flush sized from the device, and energy per call.

Why: an idle GPU drops its clocks and a short warm-up measures the ramp (NVIDIA forum thread 54181: 100 us vs
300 us after a pause; tracel-ai/cubek PR #423: a bimodal 415 vs 866 us; an MI300 ramps for >= 400 ms,
ROCm/composable_kernel PR #1241). So the visit warms up by device-busy time until the SM clock reads >= 90% of
its maximum (bounded, and reported), then every sample taken below that clock or under a throttle reason is
dropped and counted — nvbench's rule (it drops samples below 75% of the default clock; its PR #206 halved the
noise so). A visit takes at least 10 samples and a minimum of device time (do_bench repeats for 100 ms).

CPU backends never come here: their rows and figures are what they were.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from workbench.backends.base import Backend, Timer
from workbench.core.conditions import GpuReading
from workbench.measure.backend_facts import gpu_monitor
from workbench.measure.gpu_budget import GpuBudget
from workbench.measure.result import CellResult
from workbench.measure.timer import Timing, TimingConfig
from workbench.measure.timing_modes import ModeChoice, on_cpu, sample_config, settle

_clock = time.perf_counter
#: Throttle reasons under which a sample is dropped (clocks held down by power or heat); "application clocks"
#: and "display clocks" are settings, not a slowdown during the sample.
SLOWING_REASONS = ("sw power cap", "hw slowdown", "sw thermal", "hw thermal", "power brake")
#: Device seconds between two clock readings while warming up, and a batch's device time there.
READ_EVERY_S = 0.005
#: Samples a gate drops at most per visit, as a multiple of the samples it needs: a clock that never comes up
#: does not hold the cell forever (the row then says how many were kept below the mark).
MAX_DISCARD_FACTOR = 4
#: Samples a visit takes at most to reach its device time.
MAX_VISIT_SAMPLES = 5000
NO_MONITOR = "no GPU monitor (pip install nvidia-ml-py for NVIDIA, amdsmi for AMD)"


class ClockSource(Protocol):
    """A GPU monitor (:class:`~workbench.core.conditions.NvmlMonitor`) as the visit reads it."""

    name: str

    def read(self) -> GpuReading: ...


def _max_sm(monitor: ClockSource | None) -> float | None:
    read = getattr(monitor, "max_sm_clock_mhz", None)
    return read() if read is not None else None


def slowed_by(throttle: str | None) -> str:
    """The throttle reasons that slow a sample, of a monitor's reading ("" when none)."""
    return ", ".join(w for w in (throttle or "").split(", ") if w in SLOWING_REASONS)


@dataclass
class ClockWarmup:
    """What bringing the clocks up took and reached: device-busy seconds, calls, the clock read last and its
    maximum, whether it reached the mark (None: no clock to read), and one call's device and wall time."""

    busy_s: float = 0.0
    calls: int = 0
    sm_mhz: float | None = None
    max_mhz: float | None = None
    warmed: bool | None = None
    per_call_s: float = 0.0
    wall_per_call_s: float = 0.0


def warm_clocks(timer: Timer, call: Callable[[], Any], monitor: ClockSource | None, budget: GpuBudget,
                deadline: float = math.inf) -> ClockWarmup:
    """Run ``call`` (batched to :data:`READ_EVERY_S` of device time) until the SM clock reads at least
    ``budget.clock_fraction`` of its maximum, or ``budget.clock_warmup_limit_s`` device-busy seconds (twice that
    in wall time) have gone; without a readable clock, for a tenth of the limit (do_bench's 25 ms, about)."""
    w = ClockWarmup(max_mhz=_max_sm(monitor))
    readable = monitor is not None and w.max_mhz is not None
    limit = budget.clock_warmup_limit_s if readable else budget.clock_warmup_limit_s / 10
    start, k = _clock(), 1
    while True:
        s = timer.measure(call if k == 1 else _repeat(call, k))
        w.busy_s, w.calls = w.busy_s + s.device_s, w.calls + k
        w.per_call_s = max(s.device_s / k, 1e-9)
        k = max(1, min(10_000, math.ceil(READ_EVERY_S / w.per_call_s)))
        if readable:
            w.sm_mhz = monitor.read().get("gpu_clock_mhz")
            if w.sm_mhz is not None and w.sm_mhz >= budget.clock_fraction * w.max_mhz:
                w.warmed = True
                break
        now = _clock()
        if w.busy_s >= limit or now - start >= 2 * limit or now >= deadline:
            w.warmed = False if readable else None
            break
    w.wall_per_call_s = (_clock() - start) / max(w.calls, 1)
    return w


def _repeat(call: Callable[[], Any], k: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(k):
            call()
    return run


class ClockGate:
    """``time_calls``' gate: after each sample, True (drop it) when the SM clock reads below ``min_mhz`` or a
    slowing throttle reason is active; at most ``limit`` drops, then every sample is kept."""

    def __init__(self, monitor: ClockSource, min_mhz: float, limit: int) -> None:
        self.monitor, self.min_mhz, self.limit = monitor, min_mhz, limit
        self.dropped = 0
        self.reasons: dict[str, int] = {}

    def __call__(self) -> bool:
        if self.dropped >= self.limit:
            return False
        r = self.monitor.read()
        sm, slow = r.get("gpu_clock_mhz"), slowed_by(r.get("gpu_throttle"))
        why = slow or (f"SM clock below {self.min_mhz:.0f} MHz" if sm is not None and sm < self.min_mhz else "")
        if why:
            self.dropped += 1
            self.reasons[why] = self.reasons.get(why, 0) + 1
        return bool(why)


def visit_config(config: TimingConfig, warm: ClockWarmup, deadline: float = math.inf) -> TimingConfig:
    """The round's config on a GPU: at least ``gpu.min_samples`` samples and ``gpu.min_device_s`` of device time
    (samples of ``min_sample_s`` each, one call each when cold), as far as half the time left allows."""
    budget = config.gpu
    per_sample = warm.per_call_s if config.cache == "cold" else max(warm.per_call_s, config.min_sample_s)
    need = max(config.min_samples, budget.min_samples, math.ceil(budget.min_device_s / max(per_sample, 1e-9)))
    wall_per_sample = max(warm.wall_per_call_s, warm.per_call_s) * max(1, round(per_sample / warm.per_call_s))
    if math.isfinite(deadline):
        affordable = int(max(0.0, deadline - _clock()) / 2 / max(wall_per_sample, 1e-9))
        need = min(need, max(budget.min_samples, affordable))
    need = min(need, MAX_VISIT_SAMPLES)
    return dataclasses.replace(config, min_samples=need, max_samples=max(config.max_samples, need))


@dataclass
class GpuVisit:
    """One GPU round of a cell: its clock warm-up, config and gate (:meth:`start`), and what it records."""

    config: TimingConfig
    warmup: ClockWarmup
    monitor: ClockSource | None
    gate: ClockGate | None

    @classmethod
    def start(cls, timer: Timer, calls: Sequence[Callable[[], Any]], config: TimingConfig,
              monitor: ClockSource | None, deadline: float = math.inf) -> GpuVisit:
        warm = warm_clocks(timer, calls[0], monitor, config.gpu, deadline)
        cfg = visit_config(sample_config(getattr(timer, "timing_mode", "launch"), config), warm, deadline)
        gate = None
        if monitor is not None and warm.max_mhz:
            gate = ClockGate(monitor, config.gpu.clock_fraction * warm.max_mhz,
                             MAX_DISCARD_FACTOR * cfg.min_samples)
        return cls(cfg, warm, monitor, gate)

    def record(self, res: CellResult, timing: Timing) -> None:
        """The visit's clock warm-up, dropped samples and readings on the result (one entry of ``round_gpu``)."""
        w = self.warmup
        res.gpu.clock_warmup_s = w.busy_s
        res.gpu.samples_discarded = timing.discarded
        c = res.conditions
        reading = {"sm_mhz": c.gpu_clock_mhz, "mem_mhz": c.gpu_mem_clock_mhz, "temp_c": c.gpu_temp_c,
                   "power_w": c.gpu_power_w, "throttle": c.gpu_throttle, "warmup_s": round(w.busy_s, 6),
                   "warmed": w.warmed, "discarded": timing.discarded}
        res.gpu.round_gpu = json.dumps([reading])
        if w.warmed is False:
            res.note(f"the SM clock read {w.sm_mhz or 0:.0f} of {w.max_mhz:.0f} MHz after "
                     f"{w.busy_s * 1e3:.0f} ms of device-busy warm-up (below "
                     f"{100 * self.config.gpu.clock_fraction:.0f}%)")
        elif w.warmed is None:
            res.note(f"clocks not read ({NO_MONITOR}): warmed up by {w.busy_s * 1e3:.0f} ms of device time")
        if self.gate is not None and self.gate.dropped:
            why = ", ".join(f"{n} {r}" for r, n in self.gate.reasons.items())
            kept = " (the limit: later ones kept)" if self.gate.dropped >= self.gate.limit else ""
            res.note(f"{self.gate.dropped} samples dropped{kept}: {why}")


def energy_per_call(call: Callable[[], Any], synchronize: Callable[[], None], monitor: ClockSource | None,
                    seconds: float, per_call_s: float, flops: float | None) -> tuple[float | None, float | None, str]:
    """Joules per call and GFLOP per joule from the energy counter's delta over >= ``seconds`` of ``call``
    repeated (synchronised every ~10 ms of work), and the method; (None, None, "absent: why") without one."""
    read = getattr(monitor, "energy_j", None)
    if monitor is None:
        return None, None, f"absent: {NO_MONITOR}"
    if read is None or read() is None:
        return None, None, f"absent: {monitor.name} has no energy counter for this device"
    k = max(1, min(100_000, math.ceil(0.01 / max(per_call_s, 1e-9))))
    synchronize()
    e0, t0, n = read(), _clock(), 0
    while _clock() - t0 < seconds:
        for _ in range(k):
            call()
        n += k
        synchronize()
    e1, wall = read(), _clock() - t0
    joules = (e1 - e0) / n
    if joules <= 0:
        return None, None, f"absent: the energy counter did not advance over {n} calls in {wall:.2f} s"
    gflop_j = flops / 1e9 / joules if flops else None
    return joules, gflop_j, (f"{monitor.name} total energy counter over {n} calls in {wall:.2f} s "
                             "(board energy, gaps between calls included)")


def merge_gpu_rounds(prev: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The GPU facts of a cell after one more round: warm-up and drops summed, the rounds' readings listed,
    energy from the round that read it."""
    def total(k: str) -> Any:
        a, b = prev.get(k), new.get(k)
        return a if b is None else b if a is None else a + b

    readings = [*json.loads(prev.get("round_gpu") or "[]"), *json.loads(new.get("round_gpu") or "[]")]
    out = {"clock_warmup_s": total("clock_warmup_s"), "samples_discarded": total("samples_discarded"),
           "round_gpu": json.dumps(readings) if readings else None}
    for k in ("energy_j_per_call", "gflop_per_j", "energy_method", "flush_bytes", "timing_mode"):
        out[k] = prev.get(k) if prev.get(k) is not None else new.get(k)
    return out


def begin_visit(backend: Backend, choice: ModeChoice, calls: Sequence[Callable[[], Any]], config: TimingConfig,
                res: CellResult, deadline: float, first: bool) -> tuple[ModeChoice, GpuVisit | None]:
    """On a GPU: the timing mode settled on the cell's call, clocks brought up, the visit's config and gate, and
    the cold flush's size recorded; on a CPU nothing (None), and the config as it was."""
    if on_cpu(backend):
        return choice, None
    settled = settle(choice, backend, calls[0])
    if settled is not choice:
        res.timing.timer_kind, res.timing.timing_mode = settled.timer.kind, settled.mode
        res.notes = [settled.note if n == choice.note else n for n in res.notes]
    visit = GpuVisit.start(settled.timer, calls, config, gpu_monitor(backend), deadline)
    if config.cache == "cold":
        res.gpu.flush_bytes = backend.flush_size_bytes()
    return settled, visit


def end_visit(visit: GpuVisit | None, backend: Backend, calls: Sequence[Callable[[], Any]], res: CellResult,
              timing: Timing, first: bool) -> None:
    """The visit's readings on the result, and in a first round the energy per call (where asked for)."""
    if visit is None:
        return
    visit.record(res, timing)
    if first and visit.config.gpu.energy_s > 0:
        res.gpu.energy_j_per_call, res.gpu.gflop_per_j, res.gpu.energy_method = energy_per_call(
            calls[0], backend.synchronize, visit.monitor, visit.config.gpu.energy_s, visit.warmup.per_call_s,
            res.rates.flops)

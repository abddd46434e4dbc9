"""The conditions a cell was measured under: machine load, other processes' CPU time, clocks.

A timing means little without the state of the machine while it was taken: on a shared
2-core machine another process's burst moves a median by tens of percent. Each cell is
bracketed by :meth:`ConditionsMeter.start` / :meth:`ConditionsMeter.stop`, and the row keeps
what was seen, so a reader (and the noise flag) can tell a slow kernel from a busy machine.

GPU clocks, temperature and throttle reasons come from a vendor monitor (NVML through
``nvidia-ml-py``, AMD SMI through ``amdsmi``), probed like a backend: imported lazily, and
absent monitors are simply not used. Nothing here raises: a reading that fails is None.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, NotRequired, Protocol, TypedDict

import psutil

from workbench.core.record import RowDict
from workbench.core.threads import describe

log = logging.getLogger(__name__)


@dataclass
class Conditions:
    """What the machine was doing while one cell ran (None: not readable here); each field is the row column of
    that name (tests/unit/test_spine.py keeps the types equal to :class:`workbench.core.record.Row`'s).

    ``other_cpu_s``: CPU seconds spent by every other process (busy time of the machine minus this process
    tree's); ``steal_s``: CPU time the hypervisor gave to other guests, a sign of a noisy neighbour;
    ``other_cpu_share``: share of the machine's CPU capacity used by other processes during the cell, 0..1;
    ``gpu_throttle``: active throttle reasons as words (e.g. "thermal, power cap"), "" when none, None when
    unknown; ``threads``: threads each loaded runtime used and the OpenMP wait policy, in words
    (:func:`workbench.core.threads.describe`).
    """

    load_avg_1m: float | None = None
    other_cpu_s: float | None = None
    steal_s: float | None = None
    other_cpu_share: float | None = None
    cpu_freq_mhz: float | None = None
    gpu_clock_mhz: float | None = None
    gpu_temp_c: float | None = None
    gpu_throttle: str | None = None
    gpu_mem_clock_mhz: float | None = None
    gpu_power_w: float | None = None
    threads: str | None = None

    def to_dict(self) -> RowDict:
        return asdict(self)


class GpuReading(TypedDict):
    """What a GPU monitor reads: the :class:`Conditions` fields of the GPU (None: not readable)."""

    gpu_clock_mhz: float | None
    gpu_temp_c: float | None
    gpu_throttle: str | None
    gpu_mem_clock_mhz: NotRequired[float | None]
    gpu_power_w: NotRequired[float | None]


class GpuMonitor(Protocol):
    name: str

    def read(self) -> GpuReading: ...


def _busy_seconds(t: Any) -> float:
    """Busy CPU seconds of the whole machine (all cores) from ``psutil.cpu_times()``."""
    idle = t.idle + getattr(t, "iowait", 0.0)
    return sum(t) - idle - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0) - getattr(t, "steal", 0.0)


def _cpu_of(proc: psutil.Process) -> float:
    """A process's CPU seconds, with those of its children it has already waited for."""
    c = proc.cpu_times()
    return c.user + c.system + getattr(c, "children_user", 0.0) + getattr(c, "children_system", 0.0)


def _own_seconds(p: psutil.Process) -> dict[int, float]:
    """CPU seconds of each process whose work is the measurement's own, by pid: this process, each related
    process (a worker's parent), and every live descendant of both. Descendants count because they are ours:
    measured on an H100 machine, Inductor's compile pool and Triton's ptxas (grandchildren of the sweep) were
    read as "other processes used 100% of the CPU" in 22 of 90 quick-suite cells."""
    members: dict[int, psutil.Process] = {}
    for root in (p, *_related):
        members.setdefault(root.pid, root)
        try:
            for child in _descendants(root):
                members.setdefault(child.pid, child)
        except psutil.Error:  # the parent is gone: this worker ends at its next message
            continue
    own: dict[int, float] = {}
    for pid, member in members.items():
        try:
            own[pid] = _cpu_of(member)
        except psutil.Error:  # a process that just exited
            pass
    return own


def _own_diff(ref: dict[int, float], end: dict[int, float]) -> float:
    """Own CPU seconds between two readings. A process that appeared since counts all its time (it was made
    during the window, or listed late: either way it is ours); one that vanished counts none (its time until
    the earlier reading must not come off the window)."""
    return sum(cpu - ref.get(pid, 0.0) for pid, cpu in end.items())


#: Processes whose CPU time counts as the measurement's own (a worker process counts its parent's).
_related: list[psutil.Process] = []
#: Descendants of each related process, listed again at most this often (a listing scans /proc: ~1-5 ms).
#: The machine counts as busy during a cell when other processes used more than this share of its CPU
#: capacity: half a core of competition on a 2-core machine. Measured there in 0.5 s windows: an idle
#: machine reads 0.00–0.02, one other process spinning on one core 0.49–0.53, and while other test
#: suites ran beside a sweep 0.4–1.0.
BUSY_CPU_SHARE = 0.25

CHILDREN_REFRESH_S = 5.0
_children_seen: dict[int, tuple[float, list[psutil.Process]]] = {}


def _descendants(q: psutil.Process) -> list[psutil.Process]:
    seen = _children_seen.get(q.pid)
    now = time.monotonic()
    if seen is None or now - seen[0] > CHILDREN_REFRESH_S:
        seen = (now, q.children(recursive=True))
        _children_seen[q.pid] = seen
    return seen[1]


def count_as_own(pid: int) -> None:
    """Count the CPU time of process ``pid`` and of its other children as this process's own: a worker's
    parent stores rows and draws progress, and the workers of other backends run the cells before this
    one; neither is competition from other programs. (A cell's CPU window may reach a second back.)"""
    try:
        _related.append(psutil.Process(pid))
    except psutil.Error:
        pass


#: Shortest window the CPU shares are computed over. The kernel's CPU counters tick every 10 ms, so a
#: cell of a few ms would read 0% or 100% "other" by rounding alone (measured: 144 of 183 quick-suite
#: cells flagged busy on an idle machine); a shorter cell is judged over the last second ending with it.
MIN_WINDOW_S = 1.0
#: Below this the window says nothing: the CPU shares stay None (not flagged).
MIN_USABLE_S = 0.25
#: A window reaching further back than this covers other cells' work more than this one's (a worker waits
#: while the other backends' workers run): a shorter recent window is used instead, where there is one.
MAX_WINDOW_S = 3.0


class _Snapshot:
    __slots__ = ("t", "times", "own")

    def __init__(self, t: float, times: Any, own: dict[int, float]) -> None:
        self.t, self.times, self.own = t, times, own


#: Readings taken at every start/stop in this process, newest last (shared by all meters: a sweep's cells
#: follow one another, so there is always a reading about a second old to measure from).
_history: list[_Snapshot] = []


def _snapshot(proc: psutil.Process) -> _Snapshot | None:
    try:
        snap = _Snapshot(time.perf_counter(), psutil.cpu_times(), _own_seconds(proc))
    except Exception as exc:  # noqa: BLE001 - conditions are context, never a reason to fail a cell
        log.debug("cannot read CPU times: %s", exc)
        return None
    _history.append(snap)
    cutoff = snap.t - 4 * MIN_WINDOW_S
    while len(_history) > 2 and _history[1].t <= cutoff:
        del _history[0]
    return snap


def take_reading() -> None:
    """Record a CPU reading now, so that a short cell has a window to judge by: the first one of a new process,
    and one whose worker waited while others ran (measure() takes one as each cell begins)."""
    _snapshot(psutil.Process())


class ConditionsMeter:
    """Brackets a measurement: ``start()`` before, ``stop()`` after, returns :class:`Conditions`.

    CPU figures cover the cell, or the last :data:`MIN_WINDOW_S` ending with it when the cell was
    shorter (CPU counters are too coarse for a few milliseconds).
    """

    def __init__(self, gpu: GpuMonitor | None = None) -> None:
        self._proc = psutil.Process()
        self._gpu = gpu
        self._start: _Snapshot | None = None

    def start(self) -> None:
        self._start = _snapshot(self._proc)

    def _reference(self, end: _Snapshot) -> _Snapshot | None:
        """The reading the window starts from: the cell's start, or an older one if the cell was short."""
        if self._start is not None and end.t - self._start.t >= MIN_WINDOW_S:
            return self._start
        older = [s for s in _history if s.t <= end.t - MIN_WINDOW_S]
        if older and older[-1].t >= end.t - MAX_WINDOW_S:
            return older[-1]
        recent = [s for s in _history if end.t - MAX_WINDOW_S < s.t <= end.t - MIN_USABLE_S]
        if recent:
            return recent[0]
        if older:
            return older[-1]
        first = _history[0] if _history else None
        return first if first is not None and end.t - first.t >= MIN_USABLE_S else None

    def stop(self) -> Conditions:
        c = Conditions(threads=describe())
        try:
            c.load_avg_1m = os.getloadavg()[0]
        except (OSError, AttributeError):
            pass
        end = _snapshot(self._proc) if self._start is not None else None
        ref = self._reference(end) if end is not None else None
        if end is not None and ref is not None:
            wall = end.t - ref.t
            busy = _busy_seconds(end.times) - _busy_seconds(ref.times)
            c.other_cpu_s = max(0.0, busy - _own_diff(ref.own, end.own))
            c.steal_s = max(0.0, getattr(end.times, "steal", 0.0) - getattr(ref.times, "steal", 0.0))
            cores = psutil.cpu_count() or 1
            c.other_cpu_share = min(1.0, c.other_cpu_s / (wall * cores))
        try:
            freq = psutil.cpu_freq()
            c.cpu_freq_mhz = float(freq.current) if freq and freq.current else None
        except Exception:  # noqa: BLE001 - not readable in many containers
            c.cpu_freq_mhz = None
        if self._gpu is not None:
            try:
                for k, v in self._gpu.read().items():
                    setattr(c, k, v)
            except Exception as exc:  # noqa: BLE001 - a monitor that fails says nothing, not everything
                log.debug("GPU monitor %s failed: %s", self._gpu.name, exc)
        return c


# -- GPU monitors -------------------------------------------------------------------------------

#: NVML clocks-event reason bits (nvmlClocksEventReason*), as words.
NVML_REASONS = {0x2: "application clocks", 0x4: "sw power cap", 0x8: "hw slowdown", 0x20: "sw thermal",
                0x40: "hw thermal", 0x80: "power brake", 0x100: "display clocks"}


class NvmlMonitor:
    """NVIDIA GPUs through NVML (``pip install nvidia-ml-py``): clocks, temperature, power and throttle reasons
    (:meth:`read`), the SM clock's maximum and the energy counter (:mod:`workbench.measure.gpu_visit`)."""

    name = "nvml"

    def __init__(self, index: int = 0) -> None:
        import pynvml

        pynvml.nvmlInit()
        self._nvml = pynvml
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)

    def read(self) -> GpuReading:
        n, h = self._nvml, self._handle
        reasons = n.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return {"gpu_clock_mhz": float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
                "gpu_temp_c": float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
                "gpu_throttle": ", ".join(w for bit, w in NVML_REASONS.items() if reasons & bit),
                "gpu_mem_clock_mhz": float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
                "gpu_power_w": _nvml_or_none(lambda: n.nvmlDeviceGetPowerUsage(h) / 1e3)}

    def max_sm_clock_mhz(self) -> float | None:
        """The SM clock's maximum (what nvbench's and our 90% rule are relative to)."""
        n = self._nvml
        return _nvml_or_none(lambda: float(n.nvmlDeviceGetMaxClockInfo(self._handle, n.NVML_CLOCK_SM)))

    def energy_j(self) -> float | None:
        """The device's total energy counter in joules (Volta and later), None where it has none."""
        return _nvml_or_none(lambda: self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle) / 1e3)


def _nvml_or_none(read: Callable[[], float]) -> float | None:
    """A reading NVML may not support on this device (``NVMLError_NotSupported``): None then."""
    try:
        return float(read())
    except Exception:  # noqa: BLE001 - NVMLError subclasses per code; any failure is "not readable"
        return None


class AmdSmiMonitor:
    """AMD GPUs through AMD SMI (``pip install amdsmi``, with ROCm's library)."""

    name = "amdsmi"

    def __init__(self, index: int = 0) -> None:
        import amdsmi

        amdsmi.amdsmi_init()
        self._smi = amdsmi
        self._handle = amdsmi.amdsmi_get_processor_handles()[index]

    def read(self) -> GpuReading:
        s, h = self._smi, self._handle
        clk = s.amdsmi_get_clock_info(h, s.AmdSmiClkType.GFX)
        temp = s.amdsmi_get_temp_metric(h, s.AmdSmiTemperatureType.EDGE, s.AmdSmiTemperatureMetric.CURRENT)
        return {"gpu_clock_mhz": float(clk.get("clk", clk.get("cur_clk", 0)) or 0) or None,
                "gpu_temp_c": float(temp), "gpu_throttle": None}


GPU_MONITORS: dict[str, type] = {"cuda": NvmlMonitor, "rocm": AmdSmiMonitor}


def probe_gpu_monitor(platform: str, index: int = 0) -> tuple[GpuMonitor | None, str]:
    """(monitor, "") when one can read this platform's GPU ("cuda" / "rocm"), else (None, why not)."""
    cls = GPU_MONITORS.get(platform)
    if cls is None:
        return None, f"no GPU monitor for {platform!r} (known: {', '.join(GPU_MONITORS)})"
    try:
        return cls(index), ""
    except ImportError as exc:
        hint = {"cuda": "pip install nvidia-ml-py", "rocm": "pip install amdsmi"}[platform]
        return None, f"{exc.name or exc} is not installed ({hint})"
    except Exception as exc:  # noqa: BLE001 - no driver, no device: a reason, not a crash
        return None, f"{type(exc).__name__}: {exc}"

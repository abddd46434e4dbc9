"""Tutorial: Backends and devices."""

from _cells import code, md, params

CELLS = [
    md("""
# Backends and devices

A backend is one runtime on one device. Each adapter answers the same questions: is it available (and if
not, why), what device is it, what can it do, how much memory does it use, how does it time a kernel.
This notebook asks every backend whether it is available, and every available one what device it is, what it
can do and how it times; the memory question it shows on numpy (each backend measures memory its own way).
"""),
    params("""
SMALL = False
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.plain_words import what_it_is
from workbench.backends.registry import all_backends
from workbench.core.units import fmt_bytes
from workbench.report.claims import bytes_share

import os, subprocess, sys

tutorial.begin(colwidth=None)  # figures inline, reasons in full


def readable(fields):   # byte counts as a reader reads them (32 MiB, not 33554432); a value the runtime
    # does not report (lavapipe gives no compute units, clock or cache) says so instead of an empty NaN
    return {k: "not reported" if v is None else fmt_bytes(v) if isinstance(v, (int, float))
            and not isinstance(v, bool) and (k.endswith("_bytes") or "memory" in k) else v
            for k, v in fields.items()}
"""),
    md("""
## Availability and the reason when not

A backend's name is a label (`opencl-0` is the first OpenCL device the installed drivers list, `opencl-1` the
second); the column "what it is" says which runtime, driver and device stand behind it, so a device name such
as PoCL's `pthread-skylake-avx512-AMD EPYC` (PoCL's threaded CPU device, compiled for Skylake's AVX-512
instructions) can be placed. An unavailable backend gives the reason and how to fix it.
"""),
    code("""
backends = all_backends()
# by priority (lower first); among equals, the available ones in the order the workbench prefers them (numpy
# first: it is the baseline the others are compared with, then by name), then the unavailable ones by name
order = {n: i for i, n in enumerate(workbench.available_backends())}
pd.DataFrame([{"backend": n, "what it is": what_it_is(b), "device class": b.device_class, "priority": b.priority,
               "available": b.probe().available, "reason": b.probe().reason}
              for n, b in sorted(backends.items(), key=lambda kv: (kv[1].priority, order.get(kv[0], len(order)),
                                                                    kv[0]))])
"""),
    md("""
## Device information and capabilities
"""),
    code("""
available = workbench.available_backends()
info = {n: workbench.device_info(n) for n in available}
pd.DataFrame({n: readable({k: v for k, v in d.items() if k not in ("versions", "extra")}) for n, d in info.items()})
"""),
    code("""
# the same CPU's memory read two ways: most backends report the host's total; an OpenCL driver reports the global
# memory it lets kernels allocate (CL_DEVICE_GLOBAL_MEM_SIZE), which the driver may set below the host's total
host = info["numpy"]["total_memory_bytes"]
for n, d in info.items():
    if d["kind"] == "cpu" and d["total_memory_bytes"] and d["total_memory_bytes"] != host:
        # the share is taken of the two printed figures, so it follows from them (bytes_share)
        got, share, whole = bytes_share(d["total_memory_bytes"], host)
        print(f"{n}: {got} is what its driver reports kernels may use, {share} of the host's {whole} "
              "(same memory, another answer)")
"""),
    code("""
pd.DataFrame({n: readable(backends[n].capabilities().to_dict()) for n in available})
"""),
    md("""
`compiles_device_code` says whether a backend compiles the workbench's **portable** kernels (one C-like source,
compiled by CUDA/HIP through CuPy or by an OpenCL driver); `vulkan` reads False although it compiles shaders: it
runs its own WGSL kernels (the `wgsl-*` variants), not the portable ones.

Runtime and library versions recorded with every result (they decide speed as much as the hardware):
"""),
    code("""
for n, d in info.items():
    print(f"{n:10s}", ", ".join(f"{k} {v}" for k, v in d["versions"].items()))
"""),
    md("""
## Timers

A backend's **timer** is the clock that reads each call: where a runtime has device events (CUDA events,
OpenCL profiling, Vulkan timestamps) the harness uses them; otherwise it waits for the device to finish and
reads the host's clock (`sync+perf_counter`). Every row stores it (`timer_kind`). It is not the **timing
mode** (`timing_mode`), which names the span of time a row holds, not the clock that read it: `host` on a CPU
device (the whole call), `launch`, `kernel` or `graph` on a GPU (docs/gpu-timing.md). So a CPU device whose
runtime has device timestamps (PoCL's OpenCL profiling, lavapipe's Vulkan timestamps) stores `host`-span rows
read by the device's clock; the table below says both for each backend (`host span, device clock
(opencl-profiling)`), never the bare mode name. Rows of two timing modes are never compared.
"""),
    code("""
from workbench.backends.timer_clocks import mode_and_clock, timer_clock
from workbench.measure.timing_modes import timing_mode_of

# each backend's default timer, the clock it reads, and the span its rows are stored under (timing_mode_of: the
# mode the harness records for that timer), said together
timers = {n: backends[n].timer() for n in available}
pd.DataFrame({"timer": [timers[n].kind for n in available],
              "what it reads": [timer_clock(timers[n].kind) for n in available],
              "rows' timing mode and clock": [mode_and_clock(timing_mode_of(backends[n], timers[n]), timers[n].kind)
                                              for n in available]}, index=available)
"""),
    md("""
## Memory

Each backend measures memory its own way (the allocator's counters on a GPU, tracemalloc for numpy,
the process high-water mark for numba) and says which: compare numbers only when the method matches.
"""),
    code("""
import numpy as np

b = backends["numpy"]
b.reset_peak_memory()
before = workbench.memory_info("numpy")
x = b.from_numpy(np.ones(2**20 if SMALL else 2**24, dtype=np.float32))
after = workbench.memory_info("numpy")
del x
# numpy's from_numpy copies its argument, so for a moment the array existed twice: the peak says so
ratio = (after["peak_bytes"] - before["current_bytes"]) / (after["current_bytes"] - before["current_bytes"])
print(f"held {after['current_bytes'] / 2**20:.0f} MiB after the call; the peak was {ratio:.1f}x that, "
      + ("the argument and its copy alive at once" if 1.9 < ratio < 2.1 else "not the 2x a single copy explains"))
pd.DataFrame({"before": readable(before), "after allocating": readable(after)})
"""),
    md("""
## Automatic choice and the `WORKBENCH_BACKEND` override

Without instructions the workbench picks the best available backend by priority
(CUDA/ROCm > XPU > MPS > vendor plugins > OpenCL GPU > CPU). The environment variable
`WORKBENCH_BACKEND` overrides the choice; `workbench.set_backend(name)` does the same in code.
"""),
    code("""
print("automatic:", workbench.get_backend().name)
print("preference order (priority, then numpy first among equals, then name):", available)
"""),
    code("""
def backend_in_fresh_process(value):
    env = {**os.environ, "WORKBENCH_BACKEND": value}
    out = subprocess.run([sys.executable, "-c", "import workbench; print(workbench.get_backend().name)"],
                         env=env, capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]

for value in ["auto", "numpy", available[-1], "torch-cuda"]:
    print(f"WORKBENCH_BACKEND={value:12s} -> {backend_in_fresh_process(value)}")
"""),
    code("""
# set another backend than the automatic choice, then go back to the automatic one
other = next((n for n in available if n != workbench.get_backend().name), None)
if other is not None:
    workbench.set_backend(other)
    print("now:", workbench.get_backend().name)
workbench.set_backend("auto")
print("back to the automatic choice:", workbench.get_backend().name)
"""),
]

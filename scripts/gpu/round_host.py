"""Why do a GPU cell's round medians differ 2-5x while each round's samples agree? One process, a few quick-suite
cells, many visits each (a CPU gap between visits, as a sweep's float64 references and other cells make), and
per visit, in a random order:

- ``wb``: the workbench's own loop (the quick suite's later-round config, event timer, GPU idle at each start
  event), with the timing thread's CPU time over the loop's wall time, and the SM clock before and after;
- ``busy``: the same k calls per sample, but with the GPU kept busy (``torch.cuda._sleep``) while the host
  enqueues the start event, the calls and the end event: the device time of the calls alone, whatever the host.

Prints one line per visit and, per cell, the max/min of visit medians for each. If ``wb`` swings and ``busy``
does not, the swing is the host's enqueue speed (device starved between launches), not the GPU."""

import math
import os
import random
import statistics
import time

import numpy as np
import torch

from workbench.backends import registry as backends
from workbench.catalog.registry import get_kernel, get_variant
from workbench.measure.audit import NoAudit
from workbench.measure.case import Case
from workbench.measure.rounds import round_config
from workbench.measure.timer import time_calls
from workbench.sweep.suites import SUITES

try:
    import pynvml
    pynvml.nvmlInit()
    _H = pynvml.nvmlDeviceGetHandleByIndex(0)

    def sm_clock() -> float:
        return float(pynvml.nvmlDeviceGetClockInfo(_H, pynvml.NVML_CLOCK_SM))
except Exception:  # noqa: BLE001
    def sm_clock() -> float:
        return math.nan

CELLS = [("cupy", "softmax", "cupy", {"rows": 2048, "cols": 2048}),
         ("cupy", "gemm_int8", "cupy", {"m": 8, "n": 4864, "k": 896}),
         ("triton-cuda", "transpose", "triton", {"rows": 2048, "cols": 2048}),
         ("torch-cuda", "softmax", "torch", {"rows": 64, "cols": 2048}),
         ("cupy", "saxpy", "cupy", {"n": 87360})]
VISITS = int(os.environ.get("VISITS", "8"))


def steal() -> float:
    with open("/proc/stat") as f:
        return float(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")


def busy_measure(timer, calls, k: int, samples: int, sleep_cycles: int) -> list[float]:
    out = []
    for i in range(samples):
        start, end = timer._new_event(), timer._new_event()
        torch.cuda.synchronize()
        torch.cuda._sleep(sleep_cycles)  # the GPU is busy while the host enqueues what follows
        start.record()
        for j in range(k):
            calls[(i + j) % len(calls)]()
        end.record()
        end.synchronize()
        out.append(timer._elapsed_s(start, end) / k)
    return out


def main() -> None:
    quick = SUITES["quick"]
    from workbench.measure.timer import TimingConfig
    base = TimingConfig(warmup_s=quick["warmup_s"], budget_s=quick["budget_s"], target_spread=quick["target_spread"],
                        min_samples=quick["min_samples"], max_samples=quick["max_samples"], n_inputs=2)
    cfg = round_config(base, quick["rounds"], later=True)
    print("later-round config:", cfg, flush=True)
    ref = np.random.default_rng(0).standard_normal((700, 700))
    for bname, kernel, vname, params in CELLS:
        try:
            backend = backends.get(bname)
            case = Case(get_kernel(kernel), get_variant(kernel, vname), backend, params, "float32", seed=1)
            assert case.run_and_check().passed
        except Exception as exc:  # noqa: BLE001
            print(bname, kernel, "skipped:", type(exc).__name__, exc, flush=True)
            continue
        timer = backend.timer()
        out = case.outputs
        calls = [lambda case=case, out=out: case.call(case.inputs, out)]
        res = {"wb": [], "busy": [], "wb_host": []}
        for v in range(VISITS):
            (ref @ ref).sum()  # a CPU gap, as a float64 reference makes (GPU idle)
            time.sleep(0.02)
            order = ["wb", "busy"] if random.random() < 0.5 else ["busy", "wb"]
            line = []
            for what in order:
                c0, s0 = sm_clock(), steal()
                if what == "wb":
                    w0, t0 = time.perf_counter(), time.thread_time()
                    tm = time_calls(timer, calls, cfg, audit=NoAudit("diagnostic"), sync=backend.synchronize)
                    wall, cpu = time.perf_counter() - w0, time.thread_time() - t0
                    med, hmed = statistics.median(tm.samples_s), statistics.median(tm.host_samples_s)
                    k = tm.calls_per_sample
                    res["wb"].append(med)
                    res["wb_host"].append(hmed)
                    line.append(f"wb {med * 1e6:7.1f} µs host {hmed * 1e6:7.1f} k {k} n {len(tm.samples_s)} "
                                f"cpu/wall {cpu / wall:.2f}")
                else:
                    k = max(1, math.ceil(100e-6 / max(res['wb'][-1] if res['wb'] else 20e-6, 1e-6)))
                    ts = busy_measure(timer, calls, k, 8, int(2e6))
                    res["busy"].append(statistics.median(ts))
                    line.append(f"busy {res['busy'][-1] * 1e6:7.1f} µs k {k}")
                line.append(f"clk {c0:.0f}->{sm_clock():.0f} steal {steal() - s0:.3f}s")
            print(f"{bname} {kernel} {params} visit {v}: " + " | ".join(line), flush=True)
        for key, vals in res.items():
            if vals:
                print(f"  {bname} {kernel}: {key} visit medians max/min {max(vals) / min(vals):.2f} "
                      f"median {statistics.median(vals) * 1e6:.1f} µs", flush=True)


if __name__ == "__main__":
    main()

"""Contract-shaped rows without running anything: for trying reports, plots and the dashboard.

The rows follow ``docs/measurement-record.md`` column for column, with
seeded log-normal timing samples, so every code path that reads measurements
(statistics, plots, exports) can be exercised on a machine with no backend.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.record import RESULT_COLUMNS, JsonObject, RowDict, cell_key
from workbench.core.status import Status
from workbench.roofs.ceilings import AUTO_PROBE, peak_note

#: The sample machine's ceilings (GB/s, GFLOP/s, as if from the automatic probe) and last-level cache.
SAMPLE_CEILINGS = (20.0, 100.0)
SAMPLE_LLC = 32 * 2**20

# (kernel, bound, axes, sizes, flops(p), bytes(p, itemsize), {variant: (backend, runtime, mode, ns per unit)});
# the first variant of each kernel is its library baseline
_KERNELS: list[tuple[str, str, tuple[str, ...], list[dict[str, int]], Any, Any,
                     dict[str, tuple[str, str, str, float]]]] = [
    ("saxpy", "memory-bound", ("n",), [{"n": 2**k} for k in (12, 16, 20, 22)],
     lambda p: 2 * p["n"], lambda p, i: 3 * p["n"] * i,
     {"numpy": ("numpy", "numpy", "eager", 0.1), "numba_parallel": ("numba", "numba", "compiled", 0.06)}),
    ("gemm", "compute-bound", ("m", "n", "k"), [{"m": s, "n": s, "k": s} for s in (64, 128, 256)],
     lambda p: 2 * p["m"] * p["n"] * p["k"], lambda p, i: (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]) * i,
     {"numpy": ("numpy", "numpy", "eager", 0.02), "naive": ("numba", "numba", "compiled", 0.5)}),
]


def synthetic_results(run_id: str = "run-demo", seed: int = 0, n_samples: int = 25, dtype: str = "float32",
                      slowdown: float = 1.0, env_id: str = "env-demo", device: str = "Demo CPU",
                      with_failures: bool = True) -> pd.DataFrame:
    """A small, plausible run: saxpy and gemm, two variants each, a few sizes, and failure rows.

    ``slowdown`` scales every time (a second run with ``slowdown=1.5`` is clearly slower).
    """
    rng = np.random.default_rng(seed)
    itemsize = np.dtype(dtype).itemsize
    rows = []
    for kernel, bound, _axes, sizes, flops_fn, bytes_fn, variants in _KERNELS:
        for i, (vname, (backend, runtime, mode, ns)) in enumerate(variants.items()):
            for p in sizes:
                flops, nbytes = float(flops_fn(p)), float(bytes_fn(p, itemsize))
                base = (max(flops, nbytes) * ns * 1e-9 + 2e-6) * slowdown
                # one cell measured on a busy machine: a wide spread, flagged noisy
                sigma = 0.4 if (vname == "naive" and p == sizes[-1]) else 0.05
                samples = base * rng.lognormal(0.0, sigma, n_samples)
                rows.append(_row(run_id, kernel, vname, backend, runtime, device, dtype, p, mode, "hot", "ok",
                                 samples, flops, nbytes, env_id, p_mem=int(nbytes * 1.1), library=i == 0,
                                 bound=bound))
    if with_failures:
        p = {"n": 2**16}
        rows.append(_row(run_id, "saxpy", "broken", "numpy", "numpy", device, dtype, p, "eager", "hot",
                         "incorrect", np.array([1e-5] * 5), 2 * 2**16, 3 * 2**16 * itemsize, env_id,
                         message="out: max error 0.31 > tolerance 1e-05", max_error=0.31))
        rows.append(_row(run_id, "saxpy", "torch_eager", "torch-cuda", "torch", "(unavailable)", dtype, p, "eager",
                         "hot", "unsupported", np.array([]), 2 * 2**16, 3 * 2**16 * itemsize, env_id,
                         message="backend 'torch-cuda' is unavailable: no CUDA device"))
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def _row(run_id: str, kernel: str, variant: str, backend: str, runtime: str, device: str, dtype: str,
         params: dict[str, int], mode: str, cache: str, status: str, samples: np.ndarray, flops: float,
         nbytes: float, env_id: str, message: str = "", max_error: float = 1e-7, p_mem: int | None = None,
         library: bool = False, bound: str = "memory-bound") -> RowDict:
    ptext = json.dumps(params, sort_keys=False)
    ok = status == Status.OK and len(samples)
    med = float(np.median(samples)) if ok else float("nan")
    q1, q3 = (float(np.percentile(samples, 25)), float(np.percentile(samples, 75))) if ok else (np.nan, np.nan)
    gbps = nbytes / med / 1e9 if ok else float("nan")
    gflops = flops / med / 1e9 if ok else float("nan")
    spread = (q3 - q1) / med if ok else np.nan
    pct_bw, pct_fl = (100 * gbps / SAMPLE_CEILINGS[0], 100 * gflops / SAMPLE_CEILINGS[1]) if ok else (np.nan, np.nan)
    noisy = bool(ok and spread > 0.10)
    return {
        "run_id": run_id, "cell_key": cell_key(kernel, variant, backend, dtype, params, mode, cache),
        "kernel": kernel, "variant": variant, "backend": backend, "runtime": runtime, "device": device,
        "dtype": dtype, "params": ptext, "size": int(np.prod(list(params.values()))),
        "size_label": " ".join(f"{k}={v}" for k, v in params.items()), "mode": mode, "cache": cache,
        "library": library, "bound": bound,
        "status": status, "message": message, "traceback": "", "timer_kind": "sync+perf_counter",
        "timer_overhead_s": 5e-8, "samples_s": json.dumps([float(s) for s in samples] if ok else []),
        "host_samples_s": json.dumps([float(s) * 0.1 for s in samples] if ok else []),
        "n_samples": int(len(samples)) if ok else 0, "median_s": med,
        "mean_s": float(np.mean(samples)) if ok else np.nan, "min_s": float(np.min(samples)) if ok else np.nan,
        "q1_s": q1, "q3_s": q3, "iqr_s": q3 - q1, "rel_spread": (q3 - q1) / med if ok else np.nan,
        "host_median_s": med * 0.1 if ok else np.nan, "flops": flops, "bytes": nbytes,
        "gflops": gflops, "gbps": gbps, "intensity": flops / nbytes,
        "pct_peak_bw": pct_bw, "pct_peak_flops": pct_fl, "pct_published": np.nan,
        "peak_mem_bytes": p_mem if ok else np.nan, "mem_method": "tracemalloc" if ok else "",
        "max_error": max_error, "tolerance": 1e-5, "env_id": env_id,
        "started_at": "2025-01-01T00:00:00+00:00", "finished_at": "2025-01-01T00:00:01+00:00", "wall_s": 0.5,
        "rounds": 1, "noise": spread, "noisy": noisy,
        "noise_note": f"spread {spread:.0%} within the cell; other processes used 40% of the CPU" if noisy else "",
        "ceiling_gbps": SAMPLE_CEILINGS[0] if ok else np.nan, "ceiling_gflops": SAMPLE_CEILINGS[1] if ok else np.nan,
        "ceiling_source": AUTO_PROBE if ok else None,
        "peak_note": (peak_note(pct_bw, pct_fl, nbytes, SAMPLE_LLC, AUTO_PROBE, AUTO_PROBE) or "") if ok else "",
    }


def synthetic_environment(env_id: str = "env-demo", device: str = "Demo CPU") -> JsonObject:
    """An environment record of the shape the store keeps (host, devices, versions, threads)."""
    return {"env_id": env_id, "host": {"hostname": "demo-host", "os": "Linux", "cpu": device, "cores": 2,
                                       "last_level_cache_bytes": SAMPLE_LLC},
            "devices": {"numpy": {"name": device, "vendor": "demo"}},
            "versions": {"python": "3.11", "numpy": np.__version__, "pandas": pd.__version__},
            "threads": {"OMP_NUM_THREADS": "2"}}


def synthetic_peaks(backend: str = "numpy", gbps: float = 20.0, gflops: float = 100.0) -> pd.DataFrame:
    """Measured ceilings as the store's peaks table might hold them."""
    return pd.DataFrame([{"backend": backend, "device": "Demo CPU", "dtype": "float32", "gbps": gbps,
                          "gflops": gflops, "env_id": "env-demo"}])


#: (variant, backend, runtime, device, ns per unit) of a quick-suite-like kernel: the first is the library call.
_SUITE_VARIANTS = [("numpy", "numpy", "numpy", "Demo CPU", 0.1), ("numba", "numba", "numba", "Demo CPU", 0.05),
                   ("portable", "opencl-0", "opencl", "pthread-demo-Demo CPU", 0.8),
                   ("torch", "torch-cpu", "torch", "Demo CPU", 0.07), ("torch-out", "torch-cpu", "torch", "Demo CPU",
                                                                        0.06)]


def suite_results(run_id: str = "run-suite", n_kernels: int = 15, seed: int = 0, env_id: str = "env-demo"
                  ) -> pd.DataFrame:
    """Rows shaped like the quick suite's (15 kernels, five variant@backends, two or three sizes, gemm-like
    kernels whose intensity grows with size, and memories that differ on some kernels): for checking the
    report's size and figure budget without running anything."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_kernels):
        kernel = f"kernel{i:02d}"
        if i % 5 == 0:  # gemm-like: m = n = k, compute-bound
            sizes, bound = [{"m": s, "n": s, "k": s} for s in (128, 256, 384)], "compute-bound"
        elif i % 2:  # row-wise: rows and cols grow together
            sizes, bound = [{"rows": r, "cols": 4 * r} for r in (256, 512)], "memory-bound"
        else:
            sizes, bound = [{"n": 2**k} for k in (16, 18, 20)], "memory-bound"
        for j, (vname, backend, runtime, device, ns) in enumerate(_SUITE_VARIANTS):
            for p in sizes:
                if bound == "compute-bound":
                    flops = 2.0 * p["m"] * p["n"] * p["k"]
                    nbytes = 4.0 * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"])
                else:
                    n = int(np.prod(list(p.values())))
                    flops, nbytes = 4.0 * n, 12.0 * n
                base = (max(flops / 4, 2 * nbytes) * ns * 1e-9 + 5e-6) * rng.uniform(0.7, 1.4)
                samples = base * rng.lognormal(0.0, 0.08, 15)
                mem = int(nbytes * (3.0 if (i % 3 == 0 and vname == "numpy") else 1.1))
                rows.append(_row(run_id, kernel, vname, backend, runtime, device, "float32", p, "eager", "hot", "ok",
                                 samples, flops, nbytes, env_id, p_mem=mem, library=j == 0, bound=bound))
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))

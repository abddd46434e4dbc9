"""CPU performance of the catalog's CPU variants on this machine — a benchmark script, not a test.

    .venv/bin/python tests/perf/cpu_perf.py [--repeat 7] [--small]

Prints, from one run:
1. a STREAM-style triad (the numba saxpy kernel, 3 x 4 bytes per element) as the
   bandwidth this machine actually delivers to a simple parallel loop;
2. for gelu_tanh, silu, softmax, layernorm and rmsnorm at 32M float32 elements
   (8192 x 4096 for the row operations): GB/s of compulsory traffic for the
   best numba variant, numpy eager and torch eager (both torch forms where the
   catalog has them: the functional call that allocates its result, and the
   out= form that writes into a preallocated buffer), with the ratios of the
   best numba variant to the *faster* torch form and to the triad;
3. GEMM: numba naive -> numba tiled vs BLAS (numpy.matmul), GFLOP/s and % of BLAS.

Every variant is first checked against the float64 reference through the
runner (a wrong kernel is never timed). Each figure is the median of
``--repeat`` timed calls after warm-up; inputs are preallocated, outputs are
reused, so the timing is the kernel. Other processes on the machine distort
everything: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workbench.backends import all_backends  # noqa: E402
from workbench.catalog import get_kernel, get_variant  # noqa: E402
from workbench.dtypes import itemsize  # noqa: E402
from workbench.runner import Case  # noqa: E402

DTYPE = "float32"
OPS = {  # kernel -> candidate numba variants (the best is reported)
    "gelu_tanh": ["numba"],
    "silu": ["numba"],
    "softmax": ["numba"],
    "layernorm": ["numba"],
    "rmsnorm": ["numba"],
}
TORCH_FORMS = ["torch", "torch-out"]


def backend(name: str):
    b = all_backends()[name]
    b.require()
    return b


def median_seconds(case: Case, repeat: int, min_warm_s: float = 0.2) -> float:
    """Median wall time of one call, after warm-up calls totalling at least ``min_warm_s`` (and >= 2)."""
    t_end, n = time.perf_counter() + min_warm_s, 0
    while n < 2 or time.perf_counter() < t_end:
        case.run()
        n += 1
    times = []
    for _ in range(repeat):
        case.backend.synchronize()
        t0 = time.perf_counter()
        case.run()
        case.backend.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(kernel: str, variant: str, backend_name: str, params: dict, repeat: int) -> float | None:
    """Median seconds per call, or None when the variant does not exist/verify here."""
    try:
        var = get_variant(kernel, variant)
    except ValueError:
        return None
    case = Case(get_kernel(kernel), var, backend(backend_name), params, DTYPE, seed=0)
    res = case.run_and_check()
    if not res.passed:
        print(f"  !! {kernel}/{variant} on {backend_name} failed verification: {res.message}", file=sys.stderr)
        return None
    return median_seconds(case, repeat)


def gbps(kernel: str, params: dict, seconds: float) -> float:
    return get_kernel(kernel).bytes_moved(params, itemsize(DTYPE)) / seconds / 1e9


def gflops(kernel: str, params: dict, seconds: float) -> float:
    return get_kernel(kernel).flops(params) / seconds / 1e9


def fmt(v: float | None, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed calls per figure (median reported)")
    ap.add_argument("--small", action="store_true", help="smaller sizes (a smoke run, not the figures)")
    args = ap.parse_args(argv)

    n = 2**22 if args.small else 2**25
    rows, cols = (1024, 4096) if args.small else (8192, 4096)
    gemm_sizes = (256, 512) if args.small else (1024, 2048)

    import numba
    import numpy as np
    import torch

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"numpy {np.__version__}, numba {numba.__version__} ({numba.get_num_threads()} threads), "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads), dtype {DTYPE}, "
          f"median of {args.repeat}\n")

    t = measure("saxpy", "numba", "numba", {"n": n}, args.repeat)
    triad = gbps("saxpy", {"n": n}, t)
    print(f"STREAM-style triad (numba saxpy, n={n}): {triad:.1f} GB/s   "
          f"[numba threading layer: {numba.threading_layer()}]\n")

    header = ("kernel", "size", "numba", "numpy", "torch", "torch-out", "numba/torch", "numba/triad")
    table = [header]
    for kernel, candidates in OPS.items():
        p = {"n": n} if get_kernel(kernel).axes == ("n",) else {"rows": rows, "cols": cols}
        best = None
        for v in candidates:
            s = measure(kernel, v, "numba", p, args.repeat)
            if s is not None and (best is None or s < best):
                best = s
        numba_gb = gbps(kernel, p, best) if best else None
        np_s = measure(kernel, "numpy", "numpy", p, max(3, args.repeat // 2))
        torch_gb = {}
        for form in TORCH_FORMS:
            s = measure(kernel, form, "torch-cpu", p, args.repeat)
            torch_gb[form] = gbps(kernel, p, s) if s else None
        fastest_torch = max(v for v in torch_gb.values() if v is not None)
        table.append((kernel, "x".join(map(str, p.values())), fmt(numba_gb),
                      fmt(gbps(kernel, p, np_s) if np_s else None), fmt(torch_gb["torch"]),
                      fmt(torch_gb["torch-out"]),
                      fmt(numba_gb / fastest_torch if numba_gb else None, ".2f") + "x",
                      fmt(100 * numba_gb / triad if numba_gb else None, ".0f") + "%"))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print("GB/s of compulsory traffic (reads + writes of the spec)")
    for r in table:
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    print("  numba/torch: best numba variant vs the faster torch form; numba/triad: vs the triad above\n")

    print("GEMM (GFLOP/s, % of BLAS = numpy.matmul)")
    for s in gemm_sizes:
        p = {"m": s, "n": s, "k": s}
        blas = measure("gemm", "numpy", "numpy", p, 3)
        tiled = measure("gemm", "numba-tiled", "numba", p, 3)
        naive = measure("gemm", "numba-naive", "numba", p, 1) if s <= 1024 else None
        torch_s = measure("gemm", "torch", "torch-cpu", p, 3)
        line = [f"  {s}^3:", f"BLAS {gflops('gemm', p, blas):6.1f}", f"torch {gflops('gemm', p, torch_s):6.1f}"]
        for name, sec in (("naive", naive), ("tiled", tiled)):
            if sec is None:
                line.append(f"{name} (skipped: too slow at this size)")
            else:
                g = gflops("gemm", p, sec)
                line.append(f"{name} {g:6.2f} ({100 * blas / sec:.1f}% of BLAS)")
        print("  ".join(line))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

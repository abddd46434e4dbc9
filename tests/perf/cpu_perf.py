"""CPU performance of the catalog's CPU variants on this machine — a benchmark script, not a test.

    .venv/bin/python tests/perf/cpu_perf.py [--repeat 7] [--runs 3] [--threads N] [--small]

Prints, from one run:
1. a STREAM-style triad (the numba saxpy kernel, 3 x 4 bytes per element) as the
   bandwidth this machine actually delivers to a simple parallel loop;
2. for gelu_tanh, silu, softmax, layernorm and rmsnorm at 32M float32 elements
   (8192 x 4096 for the row operations): GB/s of compulsory traffic for the
   best numba variant, numpy eager and torch eager (both torch forms where the
   catalog has them: the functional call that allocates its result, and the
   out= form that writes into a preallocated buffer), with the speed-ups of the
   best numba variant over each torch form and its fraction of the triad;
3. GEMM: numba naive -> numba tiled vs BLAS (numpy.matmul), GFLOP/s and % of BLAS.

Every variant is first checked against the float64 reference through the
harness (a wrong kernel is never timed). Each figure is the median of
``--repeat`` timed calls; inputs are preallocated and outputs reused, so the
timing is the kernel (plus the allocation, for torch forms that return a new
tensor). The contenders of one operation, the triad included, are timed in
alternating rounds, so a burst of load from another process hits them all
alike (numpy eager, whose ~1 GB of temporaries per call slowed whatever ran
after it, is timed in its own rounds); the load average is printed before
and after, because on a shared machine it still distorts absolute figures.
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
from workbench.core.dtypes import itemsize  # noqa: E402
from workbench.measure.case import Case  # noqa: E402

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


def prepare(kernel: str, variant: str, backend_name: str, params: dict) -> Case | None:
    """A verified, warmed-up Case (None when the variant is absent or fails verification)."""
    try:
        var = get_variant(kernel, variant)
    except ValueError:
        return None
    case = Case(get_kernel(kernel), var, backend(backend_name), params, DTYPE, seed=0)
    res = case.run_and_check()
    if not res.passed:
        print(f"  !! {kernel}/{variant} on {backend_name} failed verification: {res.message}", file=sys.stderr)
        return None
    case.reference = case.host_inputs = None  # free the float64 copies before timing
    case.run()
    return case


def interleaved(cases: dict[str, Case | None], rounds: int) -> dict[str, float | None]:
    """Median seconds per call of each case, timed in alternating rounds (A B C A B C ...).

    On a shared machine the load changes from second to second; alternating
    the contenders exposes them to the same conditions, so their ratios are
    steadier than back-to-back blocks would give.
    """
    times: dict[str, list[float]] = {k: [] for k, c in cases.items() if c is not None}
    for _ in range(rounds):
        for label in times:
            case = cases[label]
            case.backend.synchronize()
            t0 = time.perf_counter()
            case.run()
            case.backend.synchronize()
            times[label].append(time.perf_counter() - t0)
    return {k: (statistics.median(times[k]) if k in times else None) for k in cases}


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
    ap.add_argument("--runs", type=int, default=1, help="repeat the memory-bound table; median and range")
    ap.add_argument("--threads", type=int, help="threads for numba, torch and BLAS alike (default: theirs)")
    args = ap.parse_args(argv)

    n = 2**22 if args.small else 2**25
    rows, cols = (1024, 4096) if args.small else (8192, 4096)
    gemm_sizes = (256, 512) if args.small else (1024, 2048)

    import numba
    import numpy as np
    import torch

    if args.threads:
        from threadpoolctl import threadpool_limits

        numba.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
        threadpool_limits(args.threads)  # BLAS behind numpy.matmul

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"numpy {np.__version__}, numba {numba.__version__} ({numba.get_num_threads()} threads), "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads), dtype {DTYPE}, "
          f"median of {args.repeat}\n")

    triad_case = prepare("saxpy", "numba", "numba", {"n": n})
    t = interleaved({"triad": triad_case}, args.repeat)["triad"]
    print(f"STREAM-style triad (numba saxpy, n={n}): {gbps('saxpy', {'n': n}, t):.1f} GB/s   "
          f"[numba threading layer: {numba.threading_layer()}]\n")

    # runs[kernel][column] -> one value per run (GB/s, or a ratio)
    runs: dict[str, dict[str, list[float]]] = {k: {} for k in OPS}
    sizes: dict[str, dict] = {}
    for _ in range(args.runs):
        for kernel, candidates in OPS.items():
            p = {"n": n} if get_kernel(kernel).axes == ("n",) else {"rows": rows, "cols": cols}
            sizes[kernel] = p
            cases = {f"numba:{v}": prepare(kernel, v, "numba", p) for v in candidates}
            cases.update({form: prepare(kernel, form, "torch-cpu", p) for form in TORCH_FORMS})
            cases["triad"] = triad_case
            sec = interleaved(cases, args.repeat)
            # numpy eager allocates ~1 GB of temporaries per call at these sizes; timed in the same rounds
            # it slowed whatever ran next (page reclaim), so it gets its own rounds.
            sec["numpy"] = interleaved({"numpy": prepare(kernel, "numpy", "numpy", p)},
                                       max(3, args.repeat // 2))["numpy"]
            g = {k: (gbps("saxpy", {"n": n}, v) if k == "triad" else gbps(kernel, p, v)) if v else None
                 for k, v in sec.items()}
            g["numba"] = max(v for k, v in g.items() if k.startswith("numba:") and v is not None)
            for f in TORCH_FORMS:
                g[f"x {f}"] = g["numba"] / g[f] if g[f] else None
            g["% triad"] = 100 * g["numba"] / g["triad"]
            for col, v in g.items():
                if v is not None and not col.startswith("numba:"):
                    runs[kernel].setdefault(col, []).append(v)
            del cases, sec

    cols_out = ("numba", "numpy", "torch", "torch-out", "triad", "x torch", "x torch-out", "% triad")
    header = ("kernel", "size") + cols_out
    table = [header]
    for kernel, per_col in runs.items():
        def cell(col: str, per_col: dict = per_col) -> str:
            vals = per_col.get(col)
            if not vals:
                return "-"
            spec = ".2f" if col.startswith("x ") else ".0f" if col == "% triad" else ".1f"
            med = format(statistics.median(vals), spec) + ("%" if col == "% triad" else "")
            return med if len(vals) == 1 else f"{med} [{min(vals):{spec}}-{max(vals):{spec}}]"
        table.append((kernel, "x".join(map(str, sizes[kernel].values()))) + tuple(cell(c) for c in cols_out))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(f"GB/s of compulsory traffic (reads + writes of the spec), contenders timed in alternating rounds; "
          f"median of {args.runs} run(s)" + (" [min-max]" if args.runs > 1 else ""))
    for r in table:
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    print("  numba: best numba variant. torch: the library call as written (returns a new tensor: allocation\n"
          "  and first-touch page faults included); torch-out: the same ATen kernel into a preallocated buffer.\n"
          "  x torch / x torch-out: numba speed-up over each; % triad: vs the triad timed in the same rounds.\n")

    print("GEMM (GFLOP/s, % of BLAS = numpy.matmul, timed in alternating rounds)")
    for s in gemm_sizes:
        p = {"m": s, "n": s, "k": s}
        cases = {"BLAS": prepare("gemm", "numpy", "numpy", p), "torch": prepare("gemm", "torch", "torch-cpu", p),
                 "tiled": prepare("gemm", "numba-tiled", "numba", p)}
        if s <= 1024:
            cases["naive"] = prepare("gemm", "numba-naive", "numba", p)
        sec = interleaved(cases, max(3, args.repeat // 2) * args.runs)
        blas = sec["BLAS"]
        line = [f"  {s}^3:"]
        for name in ("BLAS", "torch", "naive", "tiled"):
            if name not in sec:
                line.append(f"{name} (skipped: too slow at this size)")
            else:
                line.append(f"{name} {gflops('gemm', p, sec[name]):6.2f} ({100 * blas / sec[name]:.1f}%)")
        print("  ".join(line))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

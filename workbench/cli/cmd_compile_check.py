"""``workbench compile-check``: compile every portable device source for NVIDIA targets (rung 4), no GPU needed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile-check", help="compile portable kernels for sm_XX with nvcc/NVRTC; report "
                                             "registers, spills, shared memory",
                       description=__doc__)
    p.add_argument("--arch", default="sm_80,sm_90", help="comma-separated targets (default: sm_80,sm_90)")
    p.add_argument("--dtype", default="float32",
                   help="comma-separated dtypes to render the sources in (float32, float16, float64)")
    p.add_argument("--kernel", help="only this catalog kernel (e.g. softmax)")
    p.add_argument("--compiler", choices=("nvcc", "nvrtc"), help="force a compiler (default: nvcc, else NVRTC)")
    p.add_argument("--json", action="store_true", help="print JSON rows per (file, kernel, arch)")
    p.add_argument("--strict", action="store_true", help="fail (exit 1) when neither nvcc nor NVRTC is present")
    p.add_argument("--jobs", type=int, help="parallel compiles (default: one per core)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per compile (default 180)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..catalog import get_kernel
    from ..portable import DTYPES
    from ..portable.compile_check import find_compiler, format_table, run_check, summary, to_json, units_from_catalog

    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    bad = [a for a in archs if not a.startswith("sm_")]
    if bad:
        raise ValueError(f"--arch takes real targets like sm_80, not {', '.join(bad)}")
    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    if any(d not in DTYPES for d in dtypes):
        raise ValueError(f"--dtype: portable kernels implement {', '.join(DTYPES)}; got {args.dtype}")
    if args.kernel:
        get_kernel(args.kernel)  # unknown names list the valid ones
    compiler = find_compiler(args.compiler)
    if compiler is None:
        msg = "compile-check: neither nvcc nor NVRTC is available (install the CUDA toolkit, or " \
              "pip install 'nvidia-cuda-nvrtc==13.0.*' cupy-cuda13x); nothing was compiled"
        print(msg, file=sys.stderr)
        return 1 if args.strict else 0
    units = units_from_catalog(args.kernel)
    rows = run_check(units, archs, compiler, dtypes=dtypes, jobs=args.jobs, timeout=args.timeout,
                     relative_to=Path.cwd())
    s = summary(rows)
    if args.json:
        print(to_json(rows, compiler, archs))
    else:
        print(f"compile-check: {compiler.describe()}; archs {', '.join(archs)}; dtype {', '.join(dtypes)}; "
              f"{len(units)} compilation units")
        print(format_table(rows))
        print(f"{s['rows']} kernel rows, {s['failed']} failed ({s['compile_errors']} compile errors, "
              f"{s['spilling']} spilling)")
    return 1 if s["failed"] else 0

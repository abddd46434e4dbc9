"""``workbench compile-check``: compile every portable device source for NVIDIA and AMD targets (rung 4), no GPU needed.

sm_* targets compile with nvcc (else NVRTC); gfx* targets compile the same sources as HIP with hipcc
(HIP_PLATFORM=amd). One table: regs = registers per thread (NVIDIA) / VGPRs (AMD); spills = bytes stored/loaded
(NVIDIA) / SGPRs+VGPRs spilled (AMD, "Ns/Mv"); smem = shared memory / LDS bytes per block; stack = stack frame /
scratch bytes per thread; sgpr, agpr and occ (waves per SIMD) are AMD only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile-check", help="compile portable kernels for sm_XX (nvcc/NVRTC) and gfxNNN (hipcc); "
                                             "report registers, spills, shared memory / LDS",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="sm_80,sm_90",
                   help="comma-separated targets: sm_XX (NVIDIA) and gfxNNN (AMD, via hipcc), e.g. "
                        "sm_80,sm_90,gfx90a,gfx908,gfx1030 (default: sm_80,sm_90)")
    p.add_argument("--dtype", default="float32",
                   help="comma-separated dtypes to render the sources in (float32, float16, float64)")
    p.add_argument("--kernel", help="only this catalog kernel (e.g. softmax)")
    p.add_argument("--compiler", choices=("nvcc", "nvrtc"), help="force a compiler (default: nvcc, else NVRTC)")
    p.add_argument("--json", action="store_true", help="print JSON rows per (file, kernel, arch)")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1) when a requested target could not be checked (no nvcc/NVRTC, no hipcc, or "
                        "a gfx target the local hipcc cannot build)")
    p.add_argument("--jobs", type=int, help="parallel compiles (default: one per core)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per compile (default 180)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..catalog import get_kernel
    from ..portable import DTYPES, hip_check
    from ..portable.compile_check import (
        find_compiler,
        format_table,
        is_amd,
        run_check,
        summary,
        to_json,
        units_from_catalog,
    )

    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    bad = [a for a in archs if not (a.startswith("sm_") or a.startswith("gfx"))]
    if bad:
        raise ValueError(f"--arch takes real targets like sm_80 or gfx90a, not {', '.join(bad)}")
    for a in archs:
        if is_amd(a):
            hip_check.wave_size(a)  # rejects malformed gfx names
    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    if any(d not in DTYPES for d in dtypes):
        raise ValueError(f"--dtype: portable kernels implement {', '.join(DTYPES)}; got {args.dtype}")
    if args.kernel:
        get_kernel(args.kernel)  # unknown names list the valid ones
    nvidia = [a for a in archs if not is_amd(a)]
    compiler = find_compiler(args.compiler) if nvidia else None
    if nvidia and compiler is None:
        msg = "compile-check: neither nvcc nor NVRTC is available (install the CUDA toolkit, or " \
              "pip install 'nvidia-cuda-nvrtc==13.0.*' cupy-cuda13x); " \
              + ("nothing was compiled" if len(nvidia) == len(archs) else f"skipping {', '.join(nvidia)}")
        print(msg, file=sys.stderr)
        if len(nvidia) == len(archs):
            return 1 if args.strict else 0
    hip = hip_check.find_hipcc() if len(nvidia) < len(archs) else None
    units = units_from_catalog(args.kernel)
    rows = run_check(units, archs, compiler, dtypes=dtypes, jobs=args.jobs, timeout=args.timeout,
                     relative_to=Path.cwd(), hip=hip)
    s = summary(rows)
    if args.json:
        print(to_json(rows, compiler, archs, hip))
    else:
        tools = [t.describe() for t in (compiler, hip) if t]
        print(f"compile-check: {' + '.join(tools) or 'no compiler'}; archs {', '.join(archs)}; "
              f"dtype {', '.join(dtypes)}; {len(units)} compilation units")
        print(format_table(rows))
        print(f"{s['rows'] - s['skipped']} kernel rows, {s['failed']} failed ({s['compile_errors']} compile errors, "
              f"{s['spilling']} spilling), {s['skipped']} targets skipped")
        for r in rows:
            if r.skipped:
                print(f"  skipped {r.arch}: {r.skipped}", file=sys.stderr)
    if s["failed"]:
        return 1
    return 1 if args.strict and s["skipped"] else 0

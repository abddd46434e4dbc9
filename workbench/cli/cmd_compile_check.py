"""``workbench compile-check``: compile every portable device source and every Triton kernel of the catalog for
NVIDIA and AMD targets (rung 4), no GPU needed.

Portable C: sm_* targets compile with nvcc (else NVRTC); gfx* targets compile the same sources as HIP with hipcc
(HIP_PLATFORM=amd). Triton: each ``COMPILE`` entry of a ``triton_variants.py`` goes through triton.compile for
sm_* and gfx* targets (registers and spills from ptxas -v / the AMDHSA metadata). The tool column names the
compiler. One table: regs = registers per thread (NVIDIA) / VGPRs (AMD); spills = bytes stored/loaded
(NVIDIA) / SGPRs+VGPRs spilled (AMD, "Ns/Mv"); smem = shared memory / LDS bytes per block; stack = stack frame /
scratch bytes per thread; sgpr, agpr and occ (waves per SIMD) are AMD only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.catalog import get_kernel
from workbench.catalog.loader import ensure_default_catalog, loaded_folders
from workbench.cli.args_common import seconds, whole_number

if TYPE_CHECKING:
    from workbench.portable.check_rows import KernelRow

SOURCES = ("all", "portable", "triton")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile-check", help="compile portable kernels for sm_XX (nvcc/NVRTC) and gfxNNN (hipcc); "
                                             "report registers, spills, shared memory / LDS",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="sm_80,sm_90",
                   help="comma-separated targets: sm_XX (NVIDIA) and gfxNNN (AMD, via hipcc), e.g. "
                        "sm_80,sm_90,gfx90a,gfx908,gfx1030 (default: sm_80,sm_90)")
    p.add_argument("--dtype", default="float32",
                   help="comma-separated dtypes to render the sources in (float32, float16, float64)")
    p.add_argument("--kernel", "--kernels", dest="kernel", action="extend", nargs="+", metavar="K",
                   help="only these catalog kernels (e.g. softmax rmsnorm, or softmax,rmsnorm)")
    p.add_argument("--compiler", choices=("nvcc", "nvrtc"),
                   help="force the portable sources' NVIDIA compiler (default: nvcc, else NVRTC)")
    p.add_argument("--source", choices=SOURCES, default="all",
                   help="what to compile: portable C sources (.cu), Triton kernels, or all (default)")
    p.add_argument("--json", action="store_true", help="print JSON rows per (file, kernel, arch)")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1) when a requested target could not be checked (no nvcc/NVRTC, no hipcc, or "
                        "a gfx target the local hipcc cannot build)")
    p.add_argument("--jobs", type=whole_number(1, 1024), help="parallel compiles (default: one per core)")
    p.add_argument("--timeout", type=seconds(), default=180.0, help="seconds per compile (default 180)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.portable import hip_check, triton_catalog
    from workbench.portable.compile_check import find_compiler, is_amd, run_check, summary, to_json, units_from_catalog

    archs, dtypes, kernels = _targets(args)
    portable = args.source in ("all", "portable")
    nvidia = [a for a in archs if not is_amd(a)] if portable else []
    compiler = find_compiler(args.compiler) if nvidia else None
    if nvidia and compiler is None:
        print("compile-check: neither nvcc nor NVRTC is available for the portable sources (install the CUDA "
              "toolkit, or pip install 'nvidia-cuda-nvrtc==13.0.*' cupy-cuda13x); skipping them for "
              f"{', '.join(nvidia)}", file=sys.stderr)
    hip = hip_check.find_hipcc() if portable and len(nvidia) < len(archs) else None
    units = sorted({u for k in (kernels or [None]) for u in units_from_catalog(k)},
                   key=lambda u: (str(u.source), u.defines)) if portable else []
    rows = run_check(units, archs, compiler, dtypes=dtypes, jobs=args.jobs, timeout=args.timeout,
                     relative_to=Path.cwd(), hip=hip) if portable else []
    triton = None
    if args.source in ("all", "triton"):
        triton = triton_catalog.triton_version()
        ensure_default_catalog()  # the Triton kernels are found among the loaded catalog folders
        if "float32" in dtypes:  # the catalog's Triton kernels are float32
            rows += triton_catalog.check_catalog(archs, loaded_folders(), kernels, jobs=args.jobs,
                                                 timeout=args.timeout, relative_to=Path.cwd())
    s = summary(rows)
    if args.json:
        print(to_json(rows, compiler, archs, hip, triton=triton))
    else:
        tools = [t.describe() for t in (compiler, hip) if t] + ([f"triton {triton}"] if triton else [])
        files = len(triton_catalog.folders_with_triton(loaded_folders(), kernels)) if triton else None
        _print_table(rows, s, f"compile-check: {' + '.join(tools) or 'no compiler'}; archs {', '.join(archs)}; "
                              f"dtype {', '.join(dtypes)}; {len(units)} portable compilation units"
                              + (f", {files} Triton kernel files" if triton else ""))
    from workbench.catalog.loader import load_errors

    for where, err in load_errors.items():  # its sources were never seen: not a pass (verify says so too)
        print(f"catalog file failed to load: {where}: {err}", file=sys.stderr)
    if s["failed"] or load_errors:
        return 1
    if not rows and kernels:  # a gate on named kernels that compiled nothing passes on nothing
        print(f"compile-check: nothing to compile for {', '.join(kernels)}: no portable source and no Triton "
              "COMPILE entry was found for it", file=sys.stderr)
        return 1
    if not rows or s["skipped"] == s["rows"]:
        return 1 if args.strict else 0
    return 1 if args.strict and s["skipped"] else 0


def _targets(args: argparse.Namespace) -> tuple[list[str], list[str], list[str] | None]:
    """The targets, dtypes and kernels asked for (kernels None: all), each checked before anything compiles: a
    malformed target, a dtype the portable kernels lack or an unknown kernel fails here, naming the valid ones."""
    from workbench.cli.checks import check_arch_names
    from workbench.portable import DTYPES, hip_check
    from workbench.portable.compile_check import is_amd

    archs = check_arch_names(args.arch.split(","))  # sm_xx, '' and other non-targets fail before compiling
    for a in archs:
        if is_amd(a):
            hip_check.wave_size(a)  # rejects malformed gfx names
    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    if any(d not in DTYPES for d in dtypes):
        raise ValueError(f"--dtype: portable kernels implement {', '.join(DTYPES)}; got {args.dtype}")
    kernels = [k.strip() for v in args.kernel or [] for k in v.split(",") if k.strip()] or None
    for k in kernels or []:
        get_kernel(k)  # unknown names list the valid ones
    return archs, dtypes, kernels


def _print_table(rows: list[KernelRow], s: Mapping[str, int], heading: str) -> None:
    """``heading``, the table of compiled kernels and a count of the failures; the skipped targets and why on
    stderr."""
    from workbench.portable.compile_check import format_table

    print(heading)
    print(format_table(rows))
    print(f"{s['rows'] - s['skipped']} kernel rows, {s['failed']} failed ({s['compile_errors']} compile errors, "
          f"{s['spilling']} spilling), {s['skipped']} targets skipped")
    for r in rows:
        if r.skipped:
            print(f"  skipped {r.arch} ({r.tool}): {r.skipped}", file=sys.stderr)

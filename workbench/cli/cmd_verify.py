"""``workbench verify``: run every variant against its float64 reference and say what passed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from ..backends.base import KNOWN_DTYPES
from . import isolation_args
from .output import stdout_to_stderr


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "verify", help="check variants against the float64 reference (exit 1 on any failure)",
        description="Run each kernel variant on each available backend at the spec's small, odd "
                    "'verify' sizes with several seeds, and compare with the float64 reference. "
                    "Compiled (torch.compile) variants are skipped unless --include-compiled. "
                    "Statuses are the benchmark's: ok / incorrect / unsupported / oom / error / timeout / "
                    "crashed; "
                    "naming an unavailable backend is an error (exit 2) and verifies nothing.")
    # Singular (repeatable, as before) or plural like bench's; either takes several names, space- or comma-separated.
    p.add_argument("--backend", "--backends", dest="backend", action="extend", nargs="+", metavar="B",
                   help="backend names (repeatable, comma- or space-separated; default: all available)")
    p.add_argument("--kernel", "--kernels", dest="kernel", action="extend", nargs="+", metavar="K",
                   help="kernel names (default: all)")
    p.add_argument("--variant", "--variants", dest="variant", action="extend", nargs="+", metavar="V",
                   help="variant names (default: all)")
    p.add_argument("--dtype", "--dtypes", dest="dtype", action="extend", nargs="+", metavar="D",
                   help=f"dtypes (default float32; of {', '.join(KNOWN_DTYPES)})")
    p.add_argument("--sizes", default="verify", help="size list from the specs (default: verify)")
    p.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds 0..N-1 per size (default 3)")
    p.add_argument("--include-compiled", action="store_true", help="also verify torch.compile variants (slow)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="wall-time limit per cell (one size, every seed; default 120): a variant that never "
                        "returns is reported as timeout")
    p.add_argument("--build-timeout", type=float, default=None, metavar="SECONDS",
                   help="limit on building each cell (inputs, reference, JIT compilation), apart from --timeout "
                        "(default 600)")
    p.add_argument("--boundscheck", action="store_true",
                   help="build numba variants with bounds checks (NUMBA_BOUNDSCHECK=1, without the disk cache): "
                        "an out-of-bounds index becomes an error row")
    p.add_argument("--json", action="store_true", help="print only JSON on stdout")
    isolation_args.add(p)
    p.set_defaults(func=run)


def _names(values: list[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; None (the option was not given) stays None."""
    if values is None:
        return None
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def run(args: argparse.Namespace) -> int:
    from ..harness.cell import BUILD_TIMEOUT_S
    from ..verification import DEFAULT_TIMEOUT_S, MAX_SECONDS, MAX_SEEDS, verify

    if not 1 <= args.seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds {args.seeds} is out of range: give 1 to {MAX_SEEDS} (seeds 0..N-1 per size)")
    for flag, value in (("--timeout", args.timeout), ("--build-timeout", args.build_timeout)):
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
            raise ValueError(f"{flag} {value:g} is out of range: give a finite number of seconds > 0 and <= "
                             f"{MAX_SECONDS:g}")
    run_options = isolation_args.options(args)
    progress = None if args.json else _progress
    with stdout_to_stderr():  # runtimes that print while probing/compiling must not corrupt the output
        results = verify(backends=_names(args.backend), kernels=_names(args.kernel), variants=_names(args.variant),
                         dtypes=_names(args.dtype) or ("float32",), seeds=range(args.seeds), sizes=args.sizes,
                         include_compiled=args.include_compiled, progress=progress,
                         timeout_s=args.timeout or DEFAULT_TIMEOUT_S, boundscheck=args.boundscheck,
                         build_timeout_s=args.build_timeout or BUILD_TIMEOUT_S, **run_options)
    from ..catalog.loader import load_errors

    if args.json:
        print(json.dumps({"passed": results.ok, "results": [r.to_dict() for r in results],
                          "counts": results.counts(),
                          "skipped": [vars(s) for s in results.skipped],
                          "catalog_load_errors": load_errors}, indent=2, default=str))
    else:
        print(format_results(results))
        if args.boundscheck:
            print("numba boundscheck on: numba variants were built with bounds checks, without the disk cache")
        for where, err in load_errors.items():
            print(f"catalog file failed to load: {where}: {err}")
    return 0 if results.ok and not load_errors else 1


def _progress(row: Any) -> None:
    print(f"  {row.status:<11} {row.kernel}/{row.variant} on {row.backend} ({row.dtype})", file=sys.stderr)


def format_results(results: Any) -> str:
    from ..verification import FAILED

    rows = [("kernel", "variant", "backend", "dtype", "status", "error / tol", "worst size", "s")]
    for r in results:
        err = "-" if r.max_error is None else f"{r.max_error:.2g} / {r.tolerance:.2g}"
        size = "x".join(str(v) for v in r.params.values()) if r.params else "-"
        rows.append((r.kernel, r.variant, r.backend, r.dtype, r.status, err, size, f"{r.seconds:.1f}"))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    counts = results.counts()
    lines += ["", "  ".join(f"{k}: {v}" for k, v in counts.items())]
    bad = [r for r in results if r.status in FAILED]
    if bad:
        lines += ["", "Failures"]
        lines += [f"  {r.kernel}/{r.variant} on {r.backend} ({r.dtype}) {r.status}"
                  f"{' at ' + str(r.params) if r.params else ''}{' seed ' + str(r.seed) if r.seed is not None else ''}"
                  f": {r.message}" for r in bad]
    unsupported = [r for r in results if r.status == "unsupported"]
    if unsupported:
        lines += ["", "Unsupported"]
        lines += [f"  {r.kernel}/{r.variant} on {r.backend} ({r.dtype}): {r.message}" for r in unsupported]
    if results.skipped:
        names = ", ".join(f"{s.kernel}/{s.variant}" for s in results.skipped)
        lines += ["", f"Skipped {len(results.skipped)} compiled variants (use --include-compiled): {names}"]
    lines += ["", f"verification {'FAILED' if bad else 'passed'}: {counts['ok']} ok, {len(bad)} failed "
                  f"({' / '.join(FAILED)}), {counts['unsupported']} unsupported (not a pass)"]
    return "\n".join(lines)



"""``workbench verify``: run every variant against its float64 reference and say what passed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from workbench.backends.base import KNOWN_DTYPES
from workbench.cli import isolation_args
from workbench.cli.output import stdout_to_stderr
from workbench.core.status import Status
from workbench.core.terminal_text import raw_stream, terminal_safe
from workbench.sweep.suites import suite_checks, suite_names


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
    p.add_argument("--suite", choices=suite_names(),
                   help="verify what a bench suite measures here: its kernels, variants and backends, nothing else "
                        "(`make demo` runs --suite quick before the quick suite); --kernel, --backend and --dtype "
                        "narrow it")
    p.add_argument("--sizes", nargs="+", default=["verify"], metavar="S",
                   help="a size list of the specs (verify, quick, full; default: verify) or explicit sizes as for "
                        "bench: 4096,1000003 for 1-axis kernels, 8x65536 for multi-axis ones (axes in the kernel's "
                        "order), or rows=8:cols=65536; a kernel no size fits is skipped")
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
    p.add_argument("--details", action="store_true",
                   help="also list every cell (status, worst error against the tolerance, size, seconds)")
    p.add_argument("--json", action="store_true", help="print only JSON on stdout")
    isolation_args.add(p)
    p.set_defaults(func=run)


def _names(values: list[str] | None, flag: str = "--kernels") -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; None (the option was not given) stays None. An option given that
    names nothing (``--kernels ','``) is refused: it selected no kernel, and "verification passed: 0 ok" exited 0."""
    if values is None:
        return None
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    if not names:
        raise ValueError(f"{flag} {' '.join(values)!r} names nothing; give one or more names, or leave {flag} out")
    return names


def _sizes(tokens: list[str], kernels: list[str] | None) -> str | list[tuple[int, ...] | dict[str, int]]:
    """``--sizes`` read as ``bench`` reads it: one size-list name, or explicit sizes (tuples or axis dicts)."""
    from workbench.cli.cmd_bench import _axes_hint, parse_sizes

    return parse_sizes(tokens, _axes_hint(_names(kernels)))


def run(args: argparse.Namespace) -> int:
    from workbench.cli.probe_cache import describe_from_cache
    from workbench.measure.cell import BUILD_TIMEOUT_S
    from workbench.measure.isolation import check_isolation
    from workbench.sweep.verification import DEFAULT_TIMEOUT_S, MAX_SECONDS, MAX_SEEDS, verify

    if not 1 <= args.seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds {args.seeds} is out of range: give 1 to {MAX_SEEDS} (seeds 0..N-1 per size)")
    for flag, value in (("--timeout", args.timeout), ("--build-timeout", args.build_timeout)):
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
            raise ValueError(f"{flag} {value:g} is out of range: give a finite number of seconds > 0 and <= "
                             f"{MAX_SECONDS:g}")
    if args.suite and args.variant:
        raise ValueError(f"--suite {args.suite} chooses the variants itself; narrow it with --kernel, --backend or "
                         "--dtype, or name --variant without --suite")
    isolation_args.check(args)
    run_options = isolation_args.options(args)
    if check_isolation(args.isolation) == "process":  # cells run in worker processes: plan from info's cached probe
        describe_from_cache()
    progress = None if args.json else _Progress()
    how = dict(seeds=range(args.seeds), sizes=_sizes(args.sizes, args.kernel), include_compiled=args.include_compiled,
               progress=progress,
               timeout_s=args.timeout or DEFAULT_TIMEOUT_S, boundscheck=args.boundscheck,
               build_timeout_s=args.build_timeout or BUILD_TIMEOUT_S, **run_options)
    with stdout_to_stderr():  # runtimes that print while probing/compiling must not corrupt the output
        names = {flag: _names(getattr(args, flag), f"--{flag}s") for flag in ("kernel", "variant", "backend", "dtype")}
        if args.suite:
            results = verify_suite(args.suite, names["kernel"], names["backend"], names["dtype"], **how)
        else:
            results = verify(backends=names["backend"], kernels=names["kernel"], variants=names["variant"],
                             dtypes=names["dtype"] or ("float32",), **how)
    if progress is not None:
        progress.close()
    from workbench.catalog.loader import load_errors

    if results.ok and not any(r.status == "ok" for r in results):  # a gate that checked nothing passes anything
        why = [f"{r.kernel}/{r.variant} on {r.backend} {r.dtype}: {r.message}" for r in results][:3] + \
            [f"{s.kernel}/{s.variant}: {s.reason}" for s in results.skipped][:3]
        raise ValueError("nothing was verified: no variant of the kernels, backends and dtypes asked for ran"
                         + (f" ({'; '.join(why)})" if why else "") + "; widen --kernels/--variants/--backends/--dtypes")

    if args.json:
        print(json.dumps({"passed": results.ok, "results": [r.to_dict() for r in results],
                          "counts": results.counts(),
                          "skipped": [vars(s) for s in results.skipped],
                          "catalog_load_errors": load_errors}, indent=2, default=str))
    else:
        print(format_results(results, details=args.details))
        if args.boundscheck:
            print("numba boundscheck on: numba variants were built with bounds checks, without the disk cache")
        for where, err in load_errors.items():
            print(f"catalog file failed to load: {where}: {err}")
    return 0 if results.ok and not load_errors else 1


def verify_suite(suite: str, kernels: list[str] | None, backends: list[str] | None, dtypes: list[str] | None,
                 **how: Any) -> Any:
    """``verify`` of exactly what ``suite`` measures here (:func:`workbench.sweep.suites.suite_checks`): its
    kernels, variants and backends, and no other pair of them."""
    from workbench.sweep.verification import verify

    wanted = suite_checks(suite, kernels=kernels, backends=backends, dtypes=tuple(dtypes) if dtypes else None)
    only = {(k, v, b, d) for b, checks in wanted.items() for k, v, d in checks}
    return verify(backends=list(wanted), kernels=sorted({t[0] for t in only}), variants=sorted({t[1] for t in only}),
                  dtypes=sorted({t[3] for t in only}), only=only, **how)


class _Progress:
    """Verify's progress on stderr: one line rewritten in place on a terminal; in a log, a line every
    :data:`workbench.core.progress.LOG_EVERY_S` seconds. The cells themselves are printed once, in the summary."""

    def __init__(self, stream: Any = None) -> None:
        import time

        from workbench.core.progress import LOG_EVERY_S

        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock, self.every_s = time.monotonic, LOG_EVERY_S
        self.t0 = self.last = self.clock()
        self.done = self.failed = 0

    def __call__(self, row: Any) -> None:
        from workbench.sweep.verification import FAILED

        self.done += 1
        self.failed += row.status in FAILED
        text = (f"verify: {self.done} cells checked, {self.failed} failed; last {row.kernel}/{row.variant} on "
                f"{row.backend} ({row.dtype}): {row.status}")
        text = terminal_safe(text, one_line=True)  # names are data: never a control sequence
        if self.tty:  # our own line redraw goes under the terminal-safe stream, the text made safe above
            print(f"\r\033[K{text[:_terminal_width() - 1]}", end="", file=raw_stream(self.stream), flush=True)
        elif self.clock() - self.last >= self.every_s:
            self.last = self.clock()
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty and self.done:
            print("\r\033[K", end="", file=raw_stream(self.stream), flush=True)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns


#: Where a row's message says its runtime has no backend here: such rows are grouped per runtime.
NO_BACKEND = "no available backend runs "


def format_results(results: Any, details: bool = False) -> str:
    """The summary: a kernel × backend table of cells passed, what failed (each), what could not run
    (grouped: one line per unavailable runtime, one per reason), skipped compiled variants by count, and
    the verdict. ``details``: also every cell's row."""
    from workbench.sweep.verification import FAILED

    lines = _table(results) + [""]
    if details:
        lines += _cell_rows(results) + [""]
    counts = results.counts()
    lines.append("  ".join(f"{k}: {v}" for k, v in counts.items()))
    bad = [r for r in results if r.status in FAILED]
    if bad:
        lines += ["", "Failures"]
        lines += [f"  {r.kernel}/{r.variant} on {r.backend} ({r.dtype}) {r.status}"
                  f"{' at ' + str(r.params) if r.params else ''}{' seed ' + str(r.seed) if r.seed is not None else ''}"
                  f": {r.message}" for r in bad]
    lines += _unsupported_lines([r for r in results if r.status == Status.UNSUPPORTED])
    if results.skipped:
        kernels = len({s.kernel for s in results.skipped})
        lines += ["", f"Skipped {len(results.skipped)} compiled (torch.compile) variants of {kernels} kernels, about "
                      "30 s each to compile: --include-compiled verifies them"]
    lines += ["", f"verification {'FAILED' if bad else 'passed'}: {counts['ok']} ok, {len(bad)} failed "
                  f"({' / '.join(FAILED)}), {counts['unsupported']} unsupported (not a pass)"]
    return "\n".join(lines)


def _table(results: Any) -> list[str]:
    """Kernel rows × backend columns: ``ok`` (every cell passed), ``n/m`` (n of m passed), ``-`` (none)."""
    backends = list(dict.fromkeys(r.backend for r in results if not r.message.startswith(NO_BACKEND)))
    kernels = list(dict.fromkeys(r.kernel for r in results))
    cells: dict[tuple[str, str], list[Any]] = {}
    for r in results:
        cells.setdefault((r.kernel, r.backend), []).append(r)

    def mark(kernel: str, backend: str) -> str:
        rows = cells.get((kernel, backend), [])
        ok = sum(r.status == Status.OK for r in rows)
        return "-" if not rows else "ok" if ok == len(rows) else f"{ok}/{len(rows)}"

    rows = [("kernel", *backends)] + [(k, *(mark(k, b) for b in backends)) for k in kernels]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return ["Cells that passed per kernel and backend (ok: all; n/m: n of m; -: no variant)"] + out


def _cell_rows(results: Any) -> list[str]:
    """Every cell: status, worst error against the tolerance, the size it was worst at, seconds."""
    rows = [("kernel", "variant", "backend", "dtype", "status", "error / tol", "worst size", "seconds")]
    for r in results:
        err = "-" if r.max_error is None else f"{r.max_error:.2g} / {r.tolerance:.2g}"
        size = "x".join(str(v) for v in r.params.values()) if r.params else "-"
        rows.append((r.kernel, r.variant, r.backend, r.dtype, r.status, err, size, f"{r.seconds:.1f}"))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _unsupported_lines(rows: list[Any]) -> list[str]:
    """Unavailable runtimes one line each (their reason once, and how many variants wait for them); other
    unsupported cells one line per reason, naming the first few."""
    if not rows:
        return []
    missing: dict[str, list[Any]] = {}
    reasons: dict[str, list[Any]] = {}
    for r in rows:
        if r.message.startswith(NO_BACKEND):
            missing.setdefault(r.message, []).append(r)
        else:
            reasons.setdefault(" ".join(r.message.split()), []).append(r)
    lines: list[str] = []
    if missing:
        lines += ["", "Unavailable here (their variants were not verified)"]
        for message, group in missing.items():
            runtime, _, why = message[len(NO_BACKEND):].partition(" (")  # "RUNTIME (BACKEND: why...)"
            why = why[:-1] if why.endswith(")") else why or message
            kernels = len({r.kernel for r in group})
            lines.append(f"  {runtime}: {len(group)} variant(s) of {kernels} kernel(s) wait for it; {why}")
    if reasons:
        lines += ["", "Unsupported (not a pass)"]
        for reason, group in reasons.items():
            names = ", ".join(f"{r.kernel}/{r.variant} on {r.backend}" for r in group[:3])
            more = f" and {len(group) - 3} more" if len(group) > 3 else ""
            lines.append(f"  {len(group)} cell(s): {reason} ({names}{more})")
    return lines

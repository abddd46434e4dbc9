"""``workbench bench``: run a suite or a custom sweep, store every row, print a summary."""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..harness.timer import CACHE_MODES
from ..suites import suite_names, suite_spec
from ..sweep import SweepSpec, run_sweep
from ..verdicts import NOISY_SPREAD
from . import isolation_args

SUMMARY_COLUMNS = ("kernel", "variant", "backend", "dtype", "size", "status", "median", "GB/s", "GFLOP/s")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark suite or sweep and store the results",
                       description="Measure kernels (a named suite, or a sweep of the axes given) and store "
                                   "one row per cell in the results store.")
    p.add_argument("--suite", choices=suite_names(), help="a named suite (axes given below override it)")
    p.add_argument("--kernels", nargs="+", metavar="K", help="kernels (default: all)")
    p.add_argument("--variants", nargs="+", metavar="V", help="variants (default: all of the chosen modes)")
    p.add_argument("--backends", nargs="+", metavar="B", help="backends (default: every available one)")
    p.add_argument("--sizes", nargs="+", metavar="S",
                   help="sizes: 4096,1000003 for 1-axis kernels; 4096x1024 for multi-axis ones (axes in the "
                        "spec's order); or a size-list name such as quick / full")
    p.add_argument("--dtype", "--dtypes", dest="dtypes", nargs="+", metavar="D", help="dtypes (default float32)")
    p.add_argument("--batch-sizes", nargs="+", metavar="N", help="LLM shapes: batch sizes")
    p.add_argument("--seq-lengths", nargs="+", metavar="N", help="LLM shapes: sequence lengths")
    p.add_argument("--hidden-sizes", nargs="+", metavar="N", help="LLM shapes: hidden sizes")
    p.add_argument("--mode", "--modes", dest="modes", nargs="+", metavar="M",
                   help="variant modes: eager fused compiled (default eager fused)")
    p.add_argument("--cache", nargs="+", metavar="C",
                   help=f"{' and/or '.join(CACHE_MODES)} (hot: back to back; cold: LLC flushed before each sample)")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="timing budget per cell (all rounds together)")
    p.add_argument("--rounds", type=int, metavar="N",
                   help="measure every cell once per round, in an order shuffled per round, and judge by the "
                        "rounds' medians (default: the suite's, else 3; 1 = one stream of samples per cell)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="wall-time limit per cell and round")
    p.add_argument("--build-timeout", type=float, metavar="SECONDS",
                   help="limit on building each cell (inputs, reference, JIT compilation), apart from --timeout "
                        "(default 600)")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.add_argument("--resume", nargs="?", const="latest", metavar="RUN_ID",
                   help="finish a run's missing cells (default: the latest unfinished run)")
    p.add_argument("--json", metavar="OUT", help="also write the run as JSON")
    p.add_argument("--report", metavar="OUT", help="also write a report (.html, .md, .json or .csv)")
    p.add_argument("--name", help="a name for the run")
    p.add_argument("--retry-crashed", action="store_true",
                   help="with --resume: run again the cells that crashed (by default a crashed cell stays "
                        "crashed, so that resuming does not crash the same way)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown on a terminal only)")
    isolation_args.add(p)
    p.set_defaults(func=run)


def parse_sizes(tokens: Iterable[str]) -> str | list[tuple[int, ...]]:
    """``["4096,1000003", "37x1000"]`` -> ``[(4096,), (1000003,), (37, 1000)]``; a lone name stays a name."""
    parts = [t.strip() for tok in tokens for t in tok.split(",") if t.strip()]
    if len(parts) == 1 and not parts[0].replace("x", "").isdigit():
        return parts[0]
    out = []
    for part in parts:
        try:
            out.append(tuple(int(x) for x in part.lower().split("x")))
        except ValueError:
            raise ValueError(f"bad size {part!r}: use integers like 4096 or 4096x1024") from None
    return out


def split_list(tokens: Iterable[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``: lists may be given with spaces, commas or both."""
    if tokens is None:
        return None
    return [t.strip() for tok in tokens for t in tok.split(",") if t.strip()]


def int_list(tokens: Iterable[str] | None, flag: str) -> list[int] | None:
    items = split_list(tokens)
    if items is None:
        return None
    try:
        return [int(t) for t in items]
    except ValueError:
        raise ValueError(f"{flag} takes integers, got {' '.join(tokens)!r}") from None


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    for name in ("kernels", "variants", "backends", "dtypes", "modes", "cache"):
        setattr(args, name, split_list(getattr(args, name)))
    for name in ("batch_sizes", "seq_lengths", "hidden_sizes"):
        setattr(args, name, int_list(getattr(args, name), "--" + name.replace("_", "-")))
    axes: dict[str, Any] = {
        "kernels": args.kernels, "variants": args.variants, "backends": args.backends,
        "dtypes": tuple(args.dtypes) if args.dtypes else None,
        "sizes": parse_sizes(args.sizes) if args.sizes else None,
        "modes": tuple(args.modes) if args.modes else None,
        "cache": tuple(args.cache) if args.cache and len(args.cache) > 1 else (args.cache[0] if args.cache else None),
        "budget_s": args.budget, "timeout_s": args.timeout, "rounds": args.rounds,
        "build_timeout_s": args.build_timeout, "isolation": args.isolation, "memory_cap": args.memory_cap,
    }
    shape_axes = {"batch_sizes": args.batch_sizes, "seq_lengths": args.seq_lengths,
                  "hidden_sizes": args.hidden_sizes}
    if args.suite:
        return suite_spec(args.suite, **axes, **shape_axes)
    if any(v is not None for v in shape_axes.values()):
        return suite_spec("llm", **axes, **shape_axes)
    return SweepSpec(**{k: v for k, v in axes.items() if v is not None})


def run(args: argparse.Namespace) -> int:
    from ..store import Store

    run_options = isolation_args.options(args)
    if args.retry_crashed and not args.resume:
        raise ValueError("--retry-crashed goes with --resume (it re-runs the crashed cells of a stored run)")
    store = Store(args.store)
    resume = None
    spec: SweepSpec | None = None
    if args.resume:
        resume = store.latest_run_id(unfinished=True) if args.resume == "latest" else args.resume
        if resume is None:
            raise ValueError(f"no unfinished run to resume in {store.path}")
        wanted = int((store.run(resume).get("spec") or {}).get("rounds") or 1)  # unknown ids raise here
        stored = store.rows([resume])
        complete = sum(1 for r in stored if (r.get("rounds") or 1) >= wanted or r.get("status") != "ok")
        print(f"resuming run {resume} ({len(stored)} cells already stored, {complete} of them with all "
              f"{wanted} round{'s' if wanted != 1 else ''})", file=sys.stderr)
        given = [a for a in ("suite", "kernels", "variants", "backends", "sizes", "dtypes", "modes", "cache",
                             "budget", "timeout", "rounds") if getattr(args, a) is not None]
        if given:
            print(f"note: --resume uses the run's stored sweep; ignoring --{', --'.join(given)}", file=sys.stderr)
    else:
        spec = spec_from_args(args)
    progress = not args.quiet and sys.stderr.isatty()  # a redirected log gets no carriage-return noise
    outcome = run_sweep(spec, store=store, name=args.name, resume_run_id=resume, progress=progress,
                        argv=["workbench", *sys.argv[1:]] if sys.argv else None,
                        retry_crashed=args.retry_crashed, **run_options)
    rows = store.rows([outcome.run_id])
    print(format_summary(rows))
    counts = Counter(r["status"] for r in rows)
    tail = f" — interrupted: resume with --resume {outcome.run_id}" if outcome.interrupted else ""
    noisy = sum(1 for r in rows if r.get("noisy"))
    rounds = max((r.get("rounds") or 0 for r in rows), default=0)
    print(f"\nrun {outcome.run_id}: {len(rows)} cells ({', '.join(f'{v} {k}' for k, v in counts.items())}), "
          f"{rounds} round{'s' if rounds != 1 else ''}, {outcome.wall_s:.1f} s wall{tail}\nstore: {store.path}")
    if noisy:
        print(f"{noisy} noisy cell(s), marked ~ (spread above {100 * NOISY_SPREAD:.0f}% or the machine was busy): "
              "their timings may not repeat; see noise_note in the rows", file=sys.stderr)
    rc = 130 if outcome.interrupted else 0
    for path, fmt in ((args.json, "json"), (args.report, None)):
        if path and write_output(store, outcome.run_id, path, fmt) != 0:
            rc = rc or 1
    return rc


def write_output(store: Any, run_id: str, path: str, fmt: str | None) -> int:
    try:
        from ..report import write_report
    except ImportError as exc:
        if fmt == "json":  # the store's own export is a complete JSON document
            store.export([run_id], path)
            print(f"wrote {path} (store export; the report module is not available: {exc})")
            return 0
        print(f"cannot write {path}: the report module is not available ({exc}); the results are in "
              f"{store.path}", file=sys.stderr)
        return 1
    out = write_report(store, [run_id], path, format=fmt)
    print(f"wrote {out}")
    return 0


def fmt_seconds(s: float | None) -> str:
    if s is None or not isinstance(s, (int, float)) or not math.isfinite(s):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_rate(v: float | None) -> str:
    return "-" if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else f"{v:.3g}"


def format_summary(rows: Iterable[Mapping[str, Any]]) -> str:
    """A fixed-width table: kernel, variant, backend, dtype, size, status, median, GB/s, GFLOP/s
    (and the cache mode, when some rows were measured cold). A noisy cell's status ends in ``~``."""
    rows = list(rows)
    with_cache = any(r.get("cache") == "cold" for r in rows)
    header = SUMMARY_COLUMNS[:5] + (("cache",) if with_cache else ()) + SUMMARY_COLUMNS[5:]
    table = [header]
    for r in rows:
        table.append((str(r.get("kernel")), str(r.get("variant")), str(r.get("backend")), str(r.get("dtype")),
                      str(r.get("size_label") or r.get("size")), *((str(r.get("cache")),) if with_cache else ()),
                      str(r.get("status")) + ("~" if r.get("noisy") else ""), fmt_seconds(r.get("median_s")),
                      fmt_rate(r.get("gbps")), fmt_rate(r.get("gflops"))))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {len(header) - 3, len(header) - 2, len(header) - 1}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True))) for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)

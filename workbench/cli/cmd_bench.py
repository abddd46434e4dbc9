"""``workbench bench``: run a suite or a custom sweep, store every row, print a summary."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workbench.catalog import kernels as catalog_kernels
from workbench.cli import checks, isolation_args
from workbench.cli.probe_cache import describe_from_cache
from workbench.core.output_guard import writes_to_stdout
from workbench.core.record import TIMING_MODES, RowDict
from workbench.core.status import Status
from workbench.core.terminal_text import terminal_safe
from workbench.core.units import fmt_seconds
from workbench.judge.verdicts import NOISY_SPREAD
from workbench.measure.isolation import default_isolation
from workbench.measure.timer import CACHE_MODES
from workbench.store.database import Store, open_store
from workbench.sweep.driver import SweepOutcome, run_request
from workbench.sweep.plan import SweepPlan
from workbench.sweep.request import RunOptions, SweepRequest
from workbench.sweep.spec import SweepSpec
from workbench.sweep.suites import suite_names, suite_spec
from workbench.tuning.resolve import ENV_TUNED

SUMMARY_COLUMNS = ("kernel", "variant", "backend", "dtype", "size", "status", "median", "GB/s", "GFLOP/s")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark suite or sweep and store the results",
                       description="Measure kernels (a named suite, or a sweep of the axes given) and store "
                                   "one row per cell in the results store.")
    p.add_argument("--suite", choices=suite_names(), help="a named suite (axes given below override it)")
    p.add_argument("--list-suites", action="store_true",
                   help="list the suites with their cells on this machine and an estimated time, then exit")
    p.add_argument("--kernels", nargs="+", metavar="K", help="kernels (default: all)")
    p.add_argument("--variants", nargs="+", metavar="V", help="variants (default: all of the chosen modes)")
    p.add_argument("--backends", nargs="+", metavar="B", help="backends (default: every available one)")
    p.add_argument("--sizes", nargs="+", metavar="S",
                   help="sizes: 4096,1000003 for 1-axis kernels; 4096x1024 for multi-axis ones (axes in the "
                        "spec's order); or a size-list name such as quick / full")
    p.add_argument("--dtype", "--dtypes", dest="dtypes", nargs="+", metavar="D", help="dtypes (default float32)")
    _add_llm_shape_args(p)
    p.add_argument("--mode", "--modes", dest="modes", nargs="+", metavar="M",
                   help="variant modes: eager fused graph compiled (default eager fused graph)")
    p.add_argument("--cache", nargs="+", metavar="C",
                   help=f"{' and/or '.join(CACHE_MODES)} (hot: back to back; cold: LLC flushed before each sample)")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="timing budget per cell (all rounds together)")
    p.add_argument("--timing-mode", choices=TIMING_MODES, metavar="MODE",
                   help="what a GPU cell's time is: kernel (its kernels, from CUPTI), graph (a replayed CUDA graph), "
                        "launch (events around each call) or host; default: kernel, else graph, else launch, and "
                        "each row says which it got and why (CPU cells are always host)")
    p.add_argument("--rounds", type=int, metavar="N",
                   help="measure every cell once per round, in an order shuffled per round, and judge by the "
                        "rounds' medians (default: the suite's, else 3; 1 = one stream of samples per cell)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="wall-time limit per cell and round (default 60 s, or the suite's); a cell's first call must "
                        "return within the longest of 5 s, a tenth of this and 10x the round's warm-up and budget")
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
    p.add_argument("--tag", help="free text stored with the run (a branch, a ticket, 'after the tiling change'), "
                                 "shown by `workbench history`")
    p.add_argument("--retry-crashed", action="store_true",
                   help="with --resume: run again the cells that crashed (by default a crashed cell stays "
                        "crashed, so that resuming does not crash the same way)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal; in a log, a line per group of cells or every 10 s)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a cell did not pass (incorrect, error, timeout, crashed, oom); unsupported "
                        "cells do not count")
    p.add_argument("--no-tuned", action="store_true",
                   help="build tunable variants with their default configuration, not the one `workbench tune` "
                        "kept for this device, dtype and shape class (rows record the one used in tuned_config)")
    _add_cluster_args(p)
    isolation_args.add(p)
    p.set_defaults(func=run)



def _add_llm_shape_args(p: argparse.ArgumentParser) -> None:
    """The axes of the LLM shapes a sweep takes its sizes from (datasets/llm_shapes.csv)."""
    p.add_argument("--batch-sizes", nargs="+", metavar="N", help="LLM shapes: batch sizes")
    p.add_argument("--seq-lengths", nargs="+", metavar="N", help="LLM shapes: sequence lengths")
    p.add_argument("--hidden-sizes", nargs="+", metavar="N", help="LLM shapes: hidden sizes")
    p.add_argument("--kv-lengths", nargs="+", metavar="N",
                   help="LLM shapes: KV-cache lengths (read by the decode attention and the attention block)")
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="LLM shapes: models from datasets/llm_shapes.csv (default: the llm suite's list)")


def _add_cluster_args(p: argparse.ArgumentParser) -> None:
    """Where a sweep's cells run when they run on Dask workers, and the credentials of a ``tls://`` scheduler."""
    p.add_argument("--cluster", metavar="local:N|tcp://HOST:8786",
                   help="run the cells on Dask distributed workers and store their rows here as they finish: "
                        "local:N starts N worker processes on this machine; an address joins a running "
                        "scheduler (start one `dask worker --resources GPU=1` per device, and one with CPU=1 per "
                        "host for CPU backends); works with --resume")
    for flag, what, var in (("--tls-ca-file", "the cluster's CA certificate", "CA_FILE"),
                            ("--tls-cert", "this client's certificate", "CLIENT__CERT"),
                            ("--tls-key", "this client's private key, unless inside --tls-cert", "CLIENT__KEY")):
        p.add_argument(flag, metavar="PEM", help=f"with --cluster tls://HOST:8786: {what} (as for `dask scheduler` "
                                                 f"and `dask worker`; or DASK_DISTRIBUTED__COMM__TLS__{var})")

SIZE_HELP = ("give positive integers: 4096 for one-axis kernels, 4096x1024 for multi-axis ones (axes in the "
             "kernel's order), AXIS=N such as n=4096 or rows=4096:cols=1024, or one size-list name (quick, full, "
             "verify)")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_COUNT = re.compile(r"[0-9]+")


def parse_sizes(tokens: Iterable[str], axes_hint: str = "",
                flag: str = "--sizes") -> str | list[tuple[int, ...] | dict[str, int]]:
    """``["4096,1000003", "37x1000", "n=5"]`` -> ``[(4096,), (1000003,), (37, 1000), {"n": 5}]``; a lone
    name stays a name. A token that is none of these (-1, 1.5, 4096x, n=) is a ValueError naming it and
    ``flag`` (the option the user typed)."""
    parts = [t.strip() for tok in tokens for t in tok.split(",") if t.strip()]
    if not parts:
        raise ValueError(f"{flag} needs at least one size; {SIZE_HELP}")
    if len(parts) == 1 and _NAME.fullmatch(parts[0]) and not _COUNT.fullmatch(parts[0].replace("x", "")):
        return parts[0]
    out: list[tuple[int, ...] | dict[str, int]] = []
    for part in parts:
        keys = [kv.partition("=")[0].strip() for kv in part.split(":")] if "=" in part else []
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:  # rows=4:rows=5 ran rows=5, unsaid
            raise ValueError(f"bad size {part!r} in {flag}: {', '.join(twice)} given more than once; give each "
                             f"axis once{axes_hint}")
        try:
            if "=" in part:
                pairs = [kv.partition("=") for kv in part.split(":")]
                if not all(_NAME.fullmatch(k.strip()) and _COUNT.fullmatch(v.strip()) for k, _, v in pairs):
                    raise ValueError
                out.append({k.strip(): int(v) for k, _, v in pairs})
            else:
                items = part.lower().split("x")
                if not all(_COUNT.fullmatch(x) for x in items):
                    raise ValueError
                out.append(tuple(int(x) for x in items))
        except ValueError:
            raise ValueError(f"bad size {part!r} in {flag}: not understood; {SIZE_HELP}{axes_hint}") from None
    return out


def _axes_hint(kernels: list[str] | None) -> str:
    """`` (softmax takes rows x cols)`` for the kernels named, for messages about sizes."""
    if not kernels:
        return ""
    try:
        known = catalog_kernels()
    except Exception:  # noqa: BLE001 - only a hint
        return ""
    found = [f"{k} takes {' x '.join(known[k].axes)}" for k in kernels if k in known]
    return f" ({'; '.join(found)})" if found else ""


def split_list(tokens: Iterable[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``: lists may be given with spaces, commas or both."""
    if tokens is None:
        return None
    return [t.strip() for tok in tokens for t in tok.split(",") if t.strip()]


def int_list(tokens: Iterable[str] | None, flag: str) -> list[int] | None:
    items = split_list(tokens)
    if items is None:
        return None
    for t in items:
        if not _COUNT.fullmatch(t) or not 1 <= int(t) <= SweepSpec.MAX_AXIS:
            raise ValueError(f"{flag}: {t!r} is not a valid size; give positive integers (1 to "
                             f"{SweepSpec.MAX_AXIS}), e.g. {flag} 1,8")
    return [int(t) for t in items]


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    for name in ("kernels", "variants", "backends", "dtypes", "modes", "cache"):
        setattr(args, name, split_list(getattr(args, name)))
    for name in ("batch_sizes", "seq_lengths", "kv_lengths", "hidden_sizes"):
        setattr(args, name, int_list(getattr(args, name), "--" + name.replace("_", "-")))
    args.models = split_list(args.models)
    axes: dict[str, Any] = {
        "kernels": args.kernels, "variants": args.variants, "backends": args.backends,
        "dtypes": tuple(args.dtypes) if args.dtypes else None,
        "sizes": parse_sizes(args.sizes, _axes_hint(args.kernels)) if args.sizes is not None else None,
        "modes": tuple(args.modes) if args.modes else None,
        "cache": tuple(args.cache) if args.cache and len(args.cache) > 1 else (args.cache[0] if args.cache else None),
        "budget_s": args.budget, "timeout_s": args.timeout, "rounds": args.rounds,
        "build_timeout_s": args.build_timeout, "isolation": args.isolation, "memory_cap": args.memory_cap,
        "timing_mode": args.timing_mode,
    }
    shape_axes = {"batch_sizes": args.batch_sizes, "seq_lengths": args.seq_lengths, "kv_lengths": args.kv_lengths,
                  "hidden_sizes": args.hidden_sizes, "models": args.models}
    for name in ("budget_s", "timeout_s", "build_timeout_s", "rounds"):  # named as the options, before anything
        if axes[name] is not None:
            SweepSpec.check_option(name, axes[name], SweepSpec.FLAGS[name])
    if args.suite:
        spec = suite_spec(args.suite, **axes, **shape_axes)
    elif any(v is not None for v in shape_axes.values()):
        spec = suite_spec("llm", **axes, **shape_axes)
    else:
        spec = SweepSpec(**{k: v for k, v in axes.items() if v is not None})
    spec.check(SweepSpec.FLAGS)
    return spec


def _start_named_workers(args: argparse.Namespace, options: RunOptions) -> None:
    """The worker processes of the backends named with --backends, launched before the sweep is built (their
    start-up overlaps the catalog, the store and the plan): names that are not one available backend
    (patterns, typos, unavailable ones) wait for the sweep, which reports them."""
    from workbench.backends import registry
    from workbench.measure.isolation import start_early

    names = [n for part in (args.backends or []) for n in str(part).split(",") if n]
    found = []
    for n in names:
        try:
            b = registry.get(n)
        except (KeyError, ValueError):
            return
        if not b.probe().available:
            return
        found.append(b.name)
    try:
        start_early(found, options.isolation, memory_cap=options.memory_cap)
    except ValueError:  # a bad --memory-cap or isolation: the sweep's own check says so
        return


def run(args: argparse.Namespace) -> int:
    if args.list_suites:
        from workbench.sweep.suites import describe_suites, format_suites

        print(format_suites(describe_suites()))
        return 0
    if args.no_tuned:  # read by every build, here and in the worker processes started after this
        os.environ[ENV_TUNED] = "0"
    request, outputs = bench_request(args)
    if args.resume:  # resuming needs a store that exists: a mistyped path must not create an empty one
        open_store(args.store, must_exist=True).close()
    store = Store(args.store)
    if args.resume:
        request = _resumed(args, store, request)
    outcome = run_request(dataclasses.replace(request, options=dataclasses.replace(request.options, store=store)))
    rows = store.rows([outcome.run_id])
    rc = _print_outcome(args, store, outcome, rows)
    for path, fmt in outputs:
        if write_output(store, outcome.run_id, path, fmt) != 0:
            rc = rc or 1
    return rc


def bench_request(args: argparse.Namespace) -> tuple[SweepRequest, list[tuple[str, str | None]]]:
    """The one request ``bench`` runs, and its output files, every value checked once before a store is
    opened or a run created (a resumed run's stored spec is checked when it is read)."""
    if args.retry_crashed and not args.resume:
        raise ValueError("--retry-crashed goes with --resume (it re-runs the crashed cells of a stored run)")
    if args.cluster is not None:  # imported only here: a local sweep does not load the cluster code
        from workbench.cluster import parse_cluster

        parse_cluster(args.cluster)  # a malformed --cluster fails before anything runs
    options = RunOptions(name=args.name, tag=args.tag, retry_crashed=args.retry_crashed, progress=not args.quiet,
                         argv=["workbench", *sys.argv[1:]] if sys.argv else None, cluster=args.cluster,
                         cluster_security=_cluster_security(args),  # TLS flags that cannot work fail now, too
                         **isolation_args.options(args))
    if args.cluster is not None or (not args.resume and (args.isolation or default_isolation()) == "process"):
        describe_from_cache()  # cells run in other processes: plan from `workbench info`'s cached probe
    if args.cluster is None and not args.resume:
        _start_named_workers(args, options)
    request = SweepRequest(None if args.resume else spec_from_args(args), options)
    if not args.resume:  # unknown names, sizes that fit no kernel and bad options fail here, named as flags
        request = request.checked(SweepSpec.FLAGS)
    outputs = check_outputs(args.json, args.report)  # a bad path or format fails now, not after the sweep
    checks.check_bench(args, outputs)  # outputs never a store; environment, memory cap, name, cluster (issue 24)
    return request, outputs


def _resumed(args: argparse.Namespace, store: Store, request: SweepRequest) -> SweepRequest:
    """The request to finish a stored run: ``--resume``'s run id (the latest unfinished one by default)."""
    from workbench.store.run_names import resolve_run

    resume = (store.latest_run_id(unfinished=True) if args.resume == "latest"
              else resolve_run(store, args.resume))  # an id, a run's name or a unique prefix
    if resume is None:
        raise ValueError(f"no unfinished run to resume in {store.path}")
    stored, complete, wanted = SweepPlan.stored_summary(store, resume)  # unknown ids raise here
    print(f"resuming run {resume} ({stored} cells already stored, {complete} of them with all "
          f"{wanted} round{'s' if wanted != 1 else ''})", file=sys.stderr)
    given = [a for a in ("suite", "kernels", "variants", "backends", "sizes", "dtypes", "modes", "cache",
                         "budget", "timeout", "rounds") if getattr(args, a) is not None]
    if given:
        print(f"note: --resume uses the run's stored sweep; ignoring --{', --'.join(given)}", file=sys.stderr)
    return dataclasses.replace(request, options=dataclasses.replace(request.options, resume_run_id=resume))


def _print_outcome(args: argparse.Namespace, store: Store, outcome: SweepOutcome, rows: list[RowDict]) -> int:
    """The summary table, the reasons cells failed and the run's line; the exit code (``--strict``, Ctrl-C)."""
    print(format_summary(rows))
    reasons = format_reasons(rows)
    if reasons:
        print(reasons)
    counts = Counter(r["status"] for r in rows)
    tail = f" — interrupted: resume with --resume {outcome.run_id}" if outcome.interrupted else ""
    noisy = sum(1 for r in rows if r.get("noisy"))
    rounds = max((r.get("rounds") or 0 for r in rows), default=0)
    print(f"\nrun {outcome.run_id}: {len(rows)} cells ({', '.join(f'{v} {k}' for k, v in counts.items())}), "
          f"{rounds} round{'s' if rounds != 1 else ''}, {outcome.wall_s:.1f} s wall{tail}\n"
          f"store: {terminal_safe(store.path, one_line=True)}")  # a path is data: a line break in it is shown
    if noisy:
        print(f"{noisy} noisy cell(s), marked ~ (spread above {100 * NOISY_SPREAD:.0f}% or the machine was busy): "
              "their timings may not repeat; see noise_note in the rows", file=sys.stderr)
    failed = sum(v for k, v in counts.items() if k not in PASSING)
    if args.strict and failed:
        what = ", ".join(f"{v} {k}" for k, v in counts.items() if k not in PASSING)
        print(f"--strict: {failed} cell(s) did not pass ({what}); exit 1", file=sys.stderr)
    return 130 if outcome.interrupted else (1 if args.strict and failed else 0)


#: Statuses that do not fail ``--strict``: ``unsupported`` says a pair cannot run here, which is not a failure.
PASSING = (Status.OK, Status.UNSUPPORTED)
#: Longest reason printed per cell (the full message and traceback are in the store and the reports).
REASON_CHARS = 300


def _cluster_security(args: argparse.Namespace) -> Any:
    """A ``tls://`` scheduler's client credentials from ``--tls-ca-file/--tls-cert/--tls-key``; None without
    them (Dask's configuration is read then: :mod:`workbench.cluster.security`)."""
    if args.tls_ca_file is None and args.tls_cert is None and args.tls_key is None:
        return None
    from workbench.cluster import tls_security

    return tls_security(args.cluster, args.tls_ca_file, args.tls_cert, args.tls_key)


def check_outputs(json_path: str | None, report_path: str | None) -> list[tuple[str, str | None]]:
    """(path, format) of the outputs asked for, each checked before anything runs: a known format (by
    extension), and a place that can be written (not a directory, parent creatable and writable). Paths come
    back absolute, resolved against the folder the command started in."""
    out: list[tuple[str, str | None]] = []
    for flag, path, allowed in (("--json", json_path, ("json",)), ("--report", report_path, None)):
        if path is None:
            continue
        # the report writers (pandas, matplotlib, jinja2) load only for a run that writes a report
        from workbench.report.exporters import FORMATS as BY_SUFFIX

        if not path.strip():
            raise ValueError(f"{flag} needs a file name, got an empty one")
        p = Path(path)
        fmt = BY_SUFFIX.get(p.suffix.lower())
        valid = allowed or tuple(dict.fromkeys(BY_SUFFIX.values()))
        if fmt is None or fmt not in valid:
            raise ValueError(f"{flag} {path!r}: unsupported format {p.suffix or '(no extension)'!r}; use a file "
                             f"ending in {', '.join('.' + f for f in valid)}")
        check_writable(flag, p)
        # resolved now: an --in-process kernel that calls os.chdir must not move a relative --report
        out.append((path if writes_to_stdout(path) else os.path.abspath(path), "json" if flag == "--json" else None))
    return out


def check_writable(flag: str, p: Path) -> None:
    """``p`` can be written: not a directory, and its nearest existing ancestor a writable directory."""
    import os

    if p.is_dir():
        raise ValueError(f"{flag} {str(p)!r} is a directory; give a file name")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {str(p)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {str(p)!r}: cannot write in {str(parent)!r} (permission denied); choose "
                         "another place")


def format_reasons(rows: Iterable[Mapping[str, Any]], limit: int = 50) -> str:
    """Why cells did not pass: one line per incorrect / error / timeout / crashed / oom cell with its
    message; unsupported cells grouped by reason."""
    rows = list(rows)
    bad = [r for r in rows if r.get("status") not in PASSING]
    lines = []
    if bad:
        lines += ["", "Cells that did not pass:"]
        for r in bad[:limit]:
            message = " ".join(str(r.get("message") or "(no message)").split())
            if len(message) > REASON_CHARS:
                message = message[:REASON_CHARS] + "…"
            lines.append(f"  {r.get('kernel')}/{r.get('variant')} on {r.get('backend')} ({r.get('dtype')}, "
                         f"{r.get('size_label') or r.get('size')}) {r.get('status')}: {message}")
        if len(bad) > limit:
            lines.append(f"  ... and {len(bad) - limit} more (see the report or `workbench report`)")
    unsupported = Counter(" ".join(str(r.get("message") or "(no reason given)").split())[:REASON_CHARS]
                          for r in rows if r.get("status") == Status.UNSUPPORTED)
    if unsupported:
        lines += ["", "Unsupported (not a failure):"]
        lines += [f"  {n} cell(s): {reason}" for reason, n in unsupported.most_common(10)]
    return "\n".join(lines)


def write_output(store: Any, run_id: str, path: str, fmt: str | None) -> int:
    try:
        from workbench.report import write_report
    except ImportError as exc:
        if fmt == "json":  # the store's own export is a complete JSON document
            store.export([run_id], path)
            print(f"wrote {path} (store export; the report module is not available: {exc})")
            return 0
        print(f"cannot write {path}: the report module is not available ({exc}); the results are in "
              f"{store.path}", file=sys.stderr)
        return 1
    out = write_report(store, [run_id], path, format=fmt)
    print(f"wrote {terminal_safe(out, one_line=True)}")
    return 0


def fmt_rate(v: float | None) -> str:
    return "-" if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else f"{v:.3g}"


def format_summary(rows: Iterable[Mapping[str, Any]]) -> str:
    """A fixed-width table: kernel, variant, backend, dtype, size, status, median, GB/s, GFLOP/s
    (and the cache mode, when some rows were measured cold; the timing mode, when some rows were timed on a
    device). A noisy cell's status ends in ``~``."""
    rows = list(rows)
    with_cache = any(r.get("cache") == "cold" for r in rows)
    with_mode = any(r.get("timing_mode") not in (None, "host") for r in rows)
    header = (SUMMARY_COLUMNS[:5] + (("cache",) if with_cache else ()) + (("timing mode",) if with_mode else ())
              + SUMMARY_COLUMNS[5:])
    table = [header]
    for r in rows:
        table.append((str(r.get("kernel")), str(r.get("variant")), str(r.get("backend")), str(r.get("dtype")),
                      str(r.get("size_label") or r.get("size")), *((str(r.get("cache")),) if with_cache else ()),
                      *((str(r.get("timing_mode") or "-"),) if with_mode else ()),
                      str(r.get("status")) + ("~" if r.get("noisy") else ""), fmt_seconds(r.get("median_s"), "-"),
                      fmt_rate(r.get("gbps")), fmt_rate(r.get("gflops"))))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {len(header) - 3, len(header) - 2, len(header) - 1}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True))) for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)

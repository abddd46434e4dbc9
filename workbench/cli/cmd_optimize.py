"""Measure the backend's thread count (the same GEMM at 1, 2, 4 ... cores, in interleaved rounds) and tune every
variant of the backend that declares tunable parameters; print what was found, and with --apply write it to the
configuration file with the backend as default (as YiRage's optimize does)."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Mapping

from workbench import config as cfg
from workbench.backends import registry as backend_registry
from workbench.catalog import kernels, variants
from workbench.catalog.spec import TunableValue
from workbench.cli.args_common import add_store, command
from workbench.core.dtypes import check_dtype

#: The longest tuning budget accepted (a day): `inf` or a typo such as 1e9 would run for ever.
MAX_BUDGET_S = 86400.0


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "optimize", run, description=__doc__,
                help="measure thread counts and tunables on this machine; --apply writes them")
    p.add_argument("--backend", required=True, help="backend, e.g. numba")
    p.add_argument("--apply", action="store_true", help="write the results to the configuration file")
    p.add_argument("--budget", type=float, default=120.0, metavar="SECONDS",
                   help="wall time for the tuning searches together (default 120)")
    p.add_argument("--dtype", default="float32", help="dtype (default float32)")
    p.add_argument("--strategy", default="bayes", choices=("grid", "random", "bayes"))
    add_store(p, help="results store for the tuning rows")


def run(args: argparse.Namespace) -> int:
    from workbench.tuning import tune
    from workbench.tuning.threads import THREADED_RUNTIMES, measure_threads

    check_dtype(args.dtype)
    if not (math.isfinite(args.budget) and 0 < args.budget <= MAX_BUDGET_S):
        raise ValueError(f"--budget must be a positive number of seconds, at most {MAX_BUDGET_S:.0f} (one day): "
                         f"got {args.budget!r}")
    backend = backend_registry.get(args.backend)
    backend.require()
    config: cfg.WorkbenchConfig = cfg.read()
    if args.apply:
        config["default_backend"] = backend.name
    if backend.runtime in THREADED_RUNTIMES:
        choice = measure_threads(backend.name, backend.runtime, args.dtype)
        times = ", ".join(f"{n}: {m * 1e3:.3f} ms" for n, m in choice.medians_s.items())
        print(f"threads.{choice.key}: {choice.best} (gemm/{choice.variant} 384^3, median of 3 rounds: {times})")
        config.setdefault("threads", {})[choice.key] = choice.best
    else:
        print(f"threads: {backend.runtime} has no thread pool to size here")
    tunable = [(k, v.name) for k in sorted(kernels()) for v in variants(k).values()
               if v.tunables and backend.runtime in v.runtimes and v.unsupported_reason(backend, args.dtype) is None]
    if not tunable:
        print(f"no variant on {backend.name} declares tunable parameters")
    t0 = time.perf_counter()
    for i, (kernel, variant) in enumerate(tunable):
        share = (args.budget - (time.perf_counter() - t0)) / (len(tunable) - i)
        result = tune(kernel, variant, backend.name, dtype=args.dtype, strategy=args.strategy, budget_s=max(share, 1.0),
                      store=args.store, save=False, progress=False)
        if result.best is None:
            print(f"{kernel}/{variant}: no configuration passed verification")
            continue
        print(f"{kernel}/{variant} ({result.shape_class}): {_conf(result.best.config)} "
              f"{result.best.median_s * 1e3:.3f} ms; default {_conf(result.default.config) if result.default else '?'}"
              f"; {len(result.trials)} configurations, run {result.run_id}")
        config = cfg.with_tuned(config, result.entry())
    if args.apply:
        print(f"written to {cfg.write(config)}")
    else:
        print("nothing written: run again with --apply to keep these settings")
    return 0


def _conf(config: Mapping[str, TunableValue]) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items())

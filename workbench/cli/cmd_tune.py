"""Measure configurations of a variant's tunable parameters (each verified against the float64 reference before it
is timed), store every configuration's row under one run, and write the fastest correct one to the configuration
file for this device, dtype and shape class; `workbench bench` then builds the variant with it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.catalog import get_kernel
from workbench.catalog.spec import format_config
from workbench.cli.args_common import add_store, command, seconds, whole_number
from workbench.cli.cmd_bench import SIZE_HELP, parse_sizes
from workbench.core.dtypes import check_dtype
from workbench.core.output_guard import check_output_path
from workbench.core.record import size_label
from workbench.core.status import Status
from workbench.judge.verdict_labels import verdict_label
from workbench.judge.verdicts import is_disturbed
from workbench.tuning import tune
from workbench.tuning.search import STRATEGIES

#: The most candidates a confirmation measures, and its most rounds (a sweep's own limit).
MAX_CONFIRM = 64
MAX_CONFIRM_ROUNDS = 1000


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "tune", run, description=__doc__,
                help="search a variant's tunable parameters and keep the best configuration")
    p.add_argument("--kernel", required=True, help="kernel, e.g. gemm")
    p.add_argument("--variant", required=True, help="a variant declaring tunables, e.g. numba-tiled")
    p.add_argument("--backend", required=True, help="backend, e.g. numba")
    p.add_argument("--strategy", choices=STRATEGIES, default="bayes",
                   help="grid: every configuration in order; random; bayes: optuna's TPE (default)")
    p.add_argument("--budget", type=seconds(), default=60.0, metavar="SECONDS",
                   help="wall time for the search (default 60; a configuration started in time finishes)")
    p.add_argument("--trials", type=whole_number(1), metavar="N", help="at most N configurations")
    p.add_argument("--dtype", default="float32", help="dtype (default float32)")
    p.add_argument("--size", metavar="S", help="the size tuned for, e.g. 512x512x512 (default: the largest quick "
                                               "size); the result holds for its shape class")
    add_store(p)
    p.add_argument("--config", metavar="PATH", help="configuration file written (default $WORKBENCH_CONFIG)")
    p.add_argument("--no-save", action="store_true", help="measure and report, write no configuration")
    p.add_argument("--confirm", type=whole_number(0, MAX_CONFIRM), default=3, metavar="N",
                   help="then measure the N fastest with the default in one run of interleaved rounds and keep a "
                        "candidate only where the paired verdict calls it faster (default 3; 0: keep the search's "
                        "best as timed once)")
    # bounded here, before a run exists (--confirm-rounds 99999999999999999999 stored a run, then failed naming
    # "budget_s 3e+19")
    p.add_argument("--confirm-rounds", type=whole_number(3, MAX_CONFIRM_ROUNDS), default=5, metavar="R",
                   help=f"rounds of the confirmation, 3 to {MAX_CONFIRM_ROUNDS} (default 5)")
    p.add_argument("--seed", type=whole_number(0, 2**32 - 1), default=0,
                   help="sampler and input seed, 0 to 4294967295 (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def parse_size(text: str | None, kernel: str) -> dict[str, int] | None:
    """``512x512x512`` / ``m=512:n=512:k=512`` -> params of ``kernel``; a ValueError naming what is wrong."""
    if text is None:
        return None

    spec = get_kernel(kernel)
    parsed = parse_sizes([text], f" ({kernel} takes {' x '.join(spec.axes)})", flag="--size")
    if isinstance(parsed, str):
        if parsed not in spec.sizes:
            raise ValueError(f"--size {text!r}: {kernel} has no size list {parsed!r}; {SIZE_HELP}")
        raise ValueError(f"--size takes one size, not the list {parsed!r}; {SIZE_HELP}")
    if len(parsed) != 1:
        raise ValueError(f"--size takes one size, got {len(parsed)}")
    entry = parsed[0]
    if isinstance(entry, tuple):
        if len(entry) != len(spec.axes):
            raise ValueError(f"--size {text!r}: {kernel} takes {' x '.join(spec.axes)}")
        entry = dict(zip(spec.axes, entry, strict=True))
    return spec.validate_params(entry)


def check_config_target(path: str | None, store: str | None) -> None:
    """The configuration file ``tune`` will write, checked before anything runs (ValueError naming it)."""
    from workbench import config
    from workbench.store.database import default_store_path

    check_output_path(path or config.config_path(), flag="--config" if path else "the configuration file",
                      stores=(store, default_store_path()))
    if path:
        config.read(path)  # an existing file that is not a configuration is named now, not after the search


def run(args: argparse.Namespace) -> int:
    check_dtype(args.dtype)
    if not args.no_save:  # a folder or a store as --config was refused only after the search had measured
        check_config_target(args.config, args.store)
    if args.trials is not None and args.trials < 1:
        raise ValueError(f"--trials must be at least 1, got {args.trials}")
    if args.confirm < 0 or args.confirm_rounds < 3:
        raise ValueError(f"--confirm must be 0 or more and --confirm-rounds at least 3 (a paired verdict needs "
                         f"3 rounds); got {args.confirm} and {args.confirm_rounds}")
    result = tune(args.kernel, args.variant, args.backend, dtype=args.dtype, params=parse_size(args.size, args.kernel),
                  strategy=args.strategy, budget_s=args.budget, max_trials=args.trials, store=args.store,
                  seed=args.seed, save=not args.no_save, config_path=args.config, confirm=args.confirm,
                  confirm_rounds=args.confirm_rounds,
                  progress=not args.quiet and sys.stderr.isatty())
    print(summary(result))
    return 0 if result.best is not None else 1


def summary(result: Any) -> str:
    lines = [f"tuned {result.kernel}/{result.variant} on {result.backend} {result.dtype} {size_label(result.params)} "
             f"({result.shape_class}; device {result.device}): {len(result.trials)} of {result.space_size} "
             f"configurations measured ({result.strategy}), run {result.run_id}"]
    bad = [t for t in result.trials if t.status != Status.OK]
    for t in bad:
        lines.append(f"  {t.status}: {format_config(t.config)}: {t.message}")
    if result.best is None:
        lines.append("no configuration passed verification: nothing kept")
        return "\n".join(lines)
    best = result.best
    lines.append(f"search's best  {format_config(best.config)}: {best.median_s * 1e3:.3f} ms (timed once)")
    if result.default is not None and result.default.median_s:
        lines.append(f"hand-picked    {format_config(result.default.config)}: {result.default.median_s * 1e3:.3f} ms "
                     f"(timed once)")
    v = result.verdict
    if v and is_disturbed(v["floor"]):   # past ±50% no estimate or interval is printed: it informs nothing
        # in the label's words with its basis: too few rounds at speed is no disturbance (verdict_labels)
        label = verdict_label(v["verdict"], v["floor"], v.get("basis"))
        lines.append(f"confirmation (run {result.confirm_run_id}): {format_config(v['against'])} vs hand-picked: "
                     f"{label} (its interval is ±50% or wider: no estimate); not kept; rerun `workbench tune`, "
                     + ("with more rounds, on a host that keeps its speed" if "too few" in label else
                        "on a quieter machine if this one was busy"))
    elif v:
        lines.append(f"confirmation (run {result.confirm_run_id}): {format_config(v['against'])} vs hand-picked "
                     f"{v['speedup']:.2f}x [{v['ci_low']:.2f}, {v['ci_high']:.2f}], floor ±{v['floor']:.0%}: "
                     f"{v['verdict']}" + ("" if v["settled"] or v["verdict"] != "faster" else
                                          " (not settled: disturbed, or the cells' own medians disagree; not kept)"))
    kept = result.kept
    lines.append(f"kept           {format_config(kept.config)}"
                 + (" (the hand-picked one: no candidate was faster beyond the noise)"
                    if v and result.default is not None and kept.config == result.default.config else ""))
    lines.append(f"kept in {result.saved_to}" if result.saved_to else "not saved (--no-save)")
    return "\n".join(lines)

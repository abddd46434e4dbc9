"""The tuned numba tiled GEMM against the hand-picked tiles, in one run — a script, not a test.

    .venv/bin/python tests/perf/tuning.py [--size 1024] [--budget 120] [--strategy bayes] [--rounds 7]

1. ``workbench.tuning.tune`` searches numba-tiled's NB / KC / MC at ``--size``^3 float32 within ``--budget``
   seconds (every configuration verified against the float64 reference on odd sizes and at the size, then
   timed once); rows go to a temporary store, the best to a temporary configuration file (the user's
   configuration is not touched).
   The tuner then confirms its fastest candidates against the default in interleaved rounds and keeps one
   only when the paired verdict calls it faster.
2. The kept (else the search's best) and the hand-picked configuration (``numba-tiled[NB=256,KC=256,MC=64]``)
   are then measured side by side in one benchmark run of ``--rounds`` interleaved rounds (shuffled order per
   round, worker processes), and judged by the package's paired verdict (faster / slower / same / ambiguous).

Prints the search (configurations measured, best so far) and the comparison: medians, GFLOP/s, speed-up
with its interval and the verdict.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--strategy", default="bayes", choices=("grid", "random", "bayes"))
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wb-tuning-"))
    os.environ["WORKBENCH_CONFIG"] = str(tmp / "config.json")

    import workbench
    from workbench.catalog import get_variant, registry
    from workbench.catalog.spec import format_config
    from workbench.judge.compare import speedup_vs_baseline
    from workbench.tuning import tune

    size = {"m": args.size, "n": args.size, "k": args.size}
    store = str(tmp / "results.sqlite")
    result = tune("gemm", "numba-tiled", "numba", params=size, strategy=args.strategy, budget_s=args.budget,
                  store=store, progress=False)
    print(f"search: {len(result.trials)} of {result.space_size} configurations in {args.budget:g} s "
          f"({args.strategy}, {result.shape_class}, device {result.device})")
    for t in result.trials:
        took = f"{t.median_s * 1e3:8.2f} ms" if t.median_s else f"{t.status:>11}"
        print(f"  {t.number:3d} {format_config(t.config):24s} {took}   best so far "
              f"{t.best_so_far_s * 1e3 if t.best_so_far_s else float('nan'):.2f} ms")
    if result.best is None:
        print("no configuration passed verification")
        return 1
    v = result.verdict
    if v:
        print(f"tuner's confirmation (run {result.confirm_run_id}): {format_config(v['against'])} vs hand-picked "
              f"{v['speedup']:.2f}x [{v['ci_low']:.2f}, {v['ci_high']:.2f}], verdict {v['verdict']}; kept "
              f"{format_config(result.kept.config)}")
    default = get_variant("gemm", "numba-tiled").default_config()
    hand = registry.configured("gemm", "numba-tiled", default).name
    # the kept configuration; where the tuner kept the hand-picked one, the search's best (what it rejected)
    tuned = registry.configured("gemm", "numba-tiled",
                                result.kept.config if result.kept.config != default else result.best.config).name
    if hand == tuned:
        print(f"the hand-picked tiles were the best found ({hand}): nothing to compare")
        return 0
    res = workbench.benchmark("gemm", variants=[hand, tuned], backends="numba", sizes=[size], rounds=args.rounds,
                              store=store, progress=False, name="tuned vs hand-picked")
    df = res.df
    for name in (hand, tuned):
        row = df[df["variant"] == name].iloc[0]
        print(f"{name:36s} {row['status']:4s} median {row['median_s'] * 1e3:8.2f} ms  {row['gflops']:6.1f} GFLOP/s"
              f"  tuned_config={row['tuned_config']}")
    table = speedup_vs_baseline(df[df["status"] == "ok"], baseline_variant=hand, baseline_backend="numba")
    v = table[table["variant"] == tuned].iloc[0]
    print(f"tuned vs hand-picked, one run of {args.rounds} interleaved rounds: {v['speedup']:.2f}x "
          f"[{v['ci_low']:.2f}, {v['ci_high']:.2f}], noise floor ±{v['floor']:.0%}, verdict: {v['verdict']}")
    print(f"rows in {store} (runs {result.run_id} and {res.run_ids[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

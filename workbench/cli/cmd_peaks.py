"""``workbench peaks``: measure this machine's bandwidth and GEMM ceilings per backend and store them."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("peaks", help="measure this machine's bandwidth and FLOP ceilings per backend",
                       description="STREAM-style saxpy over arrays 4x the last-level cache and a large library "
                                   "GEMM per backend; stored so results can say '% of measured peak'. A sweep "
                                   "measures a short automatic probe of the same the first time it uses a backend "
                                   "in an environment; this longer measurement replaces it.")
    p.add_argument("--backend", "--backends", dest="backends", nargs="+", metavar="B",
                   help="backends (default: every available one)")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..peaks import measure_peaks
    from ..store import Store

    store = Store(args.store)
    peaks = measure_peaks(args.backends, store)
    rows = [("backend", "metric", "dtype", "value", "method")]
    for p in peaks:
        value = f"{p.value:.4g} {p.unit}" if p.value is not None else "-"
        rows.append((p.backend, p.metric, p.dtype, value, p.method))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4])
        if i == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    print(f"\nstored in {store.path} (replacing any automatic probe of these backends in this environment)")
    return 0

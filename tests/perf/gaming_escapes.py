"""How often does each gaming variant of tests/bad_catalog/wb_game pass ``verify``? An escape is rare by nature
(the fingerprint memoizer passed about 1 run in 75 before the audits' versions spared the landmarks a cheap
fingerprint reads), so one test run cannot show it: this loop can.

Usage: .venv/bin/python tests/perf/gaming_escapes.py [--runs N] [VARIANT ...]
(default: 100 runs of the fingerprint and memo-by-object memoizers). Prints the statuses counted per variant and
the message of a passing run; about 1 s a run on a 2-core machine."""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    from conftest import BAD_CATALOG

    from workbench.catalog import load_catalog
    from workbench.sweep.verification import verify

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("variants", nargs="*", default=["fingerprint", "memo-by-object"])
    args = ap.parse_args()
    load_catalog(BAD_CATALOG)
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for _ in range(args.runs):
        for r in verify(backends="numpy", kernels="wb_game", variants=args.variants, seeds=(0, 1)):
            counts[(r.variant, r.status)] += 1
    for variant in args.variants:
        passed = counts[(variant, "ok")]
        by_status = ", ".join(f"{s} {n}" for (v, s), n in sorted(counts.items()) if v == variant)
        print(f"{variant}: passed verify in {passed} of {args.runs} runs ({by_status})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The verdict figures of issue 9 — a benchmark script, not a test.

    .venv/bin/python tests/perf/verdicts.py [--repeats 2] [--gap-repeats 20] [--keep DIR] [--json OUT]

Everything runs through the ``workbench`` command with the defaults of ``bench`` and ``compare`` (no
``--rounds``: whatever bench does by default is what is measured), each bench a fresh process:

(a) **A/A**: the same sweep twice, A then B,

        workbench bench --kernels softmax vector_add gelu_tanh rmsnorm --backends numpy numba torch-cpu \\
            --sizes quick
        workbench compare A B --json            # how many cells are called faster or slower
        workbench compare A B --fail-on slower  # the CI gate must pass (exit 0)

    Target: at most 5% of the cells called faster or slower (identical code: every such call is false),
    and the gate passes.
(b) **real gap**: numba's softmax against numpy's at 512x2048 (several times faster on our machines),
    ``--gap-repeats`` small runs of softmax's variants at that size, each judged within the run against
    numpy (paired rounds):

        workbench bench --kernels softmax --backends numpy numba torch-cpu --sizes 512x2048
        workbench compare RUN --baseline numpy@numpy --json

    Target: called "faster" in at least 95% of the repetitions.
(c) **sweep time**: between A and B of each A/A pair the same sweep runs once more with ``--rounds 1``
    (one stream per cell, as before rounds existed); the report is the defaults' sweep wall time
    against that one.

Load from other processes is reported with the figures (the load average, and the share of the CPU
other processes took during the cells, from the rows). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from workbench.store.database import Store  # noqa: E402

AA_ARGS = ["--kernels", "softmax", "vector_add", "gelu_tanh", "rmsnorm", "--backends", "numpy", "numba", "torch-cpu",
           "--sizes", "quick"]
GAP_ARGS = ["--kernels", "softmax", "--backends", "numpy", "numba", "torch-cpu", "--sizes", "512x2048"]
AA_TARGET = 0.05
GAP_TARGET = 0.95


def workbench(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "workbench", *args], cwd=REPO, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    if check and res.returncode != 0:
        raise SystemExit(f"workbench {' '.join(args)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    return res


def bench(store: Path, args: list[str], name: str) -> tuple[str, float]:
    """Run one sweep; (run id, the sweep's wall time as the run records it)."""
    workbench("bench", *args, "--store", str(store), "--quiet", "--name", name)
    st = Store(store)
    run_id = st.latest_run_id()
    return run_id, float(st.run(run_id)["wall_s"])


def other_cpu(store: Path, run_ids: list[str]) -> float:
    df = Store(store).results(run_ids)
    share = df["other_cpu_share"].dropna() if "other_cpu_share" in df else []
    return float(share.median()) if len(share) else float("nan")


def aa_pair(store: Path, rep: int) -> dict:
    run_a, wall_a = bench(store, AA_ARGS, f"A #{rep}")
    run_1, wall_1 = bench(store, [*AA_ARGS, "--rounds", "1"], f"one round #{rep}")
    run_b, wall_b = bench(store, AA_ARGS, f"B #{rep}")
    recs = json.loads(workbench("compare", run_a, run_b, "--store", str(store), "--json").stdout)
    verdicts: dict[str, int] = {}
    for r in recs:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    called = [f"{r['kernel']} {r['variant']}@{r['backend']} {r['size']}: {r['verdict']} {r['speedup']:.2f}x"
              for r in recs if r["verdict"] in ("faster", "slower")]
    gate = workbench("compare", run_a, run_b, "--store", str(store), "--fail-on", "slower", check=False)
    rounds = Store(store).results([run_a])["rounds"].dropna()
    return {"cells": len(recs), "verdicts": verdicts, "called": called,
            "false_share": len(called) / max(len(recs), 1), "gate_exit": gate.returncode,
            "rounds": int(rounds.max()) if len(rounds) else None,
            "wall_default_s": [wall_a, wall_b], "wall_one_round_s": wall_1,
            "other_cpu_share": other_cpu(store, [run_a, run_b]), "runs": [run_a, run_b, run_1]}


def gap_repeat(store: Path, rep: int) -> dict:
    run_id, wall = bench(store, GAP_ARGS, f"gap #{rep}")
    recs = json.loads(workbench("compare", run_id, "--baseline", "numpy@numpy", "--store", str(store),
                                "--json").stdout)
    (rec,) = [r for r in recs if r["variant"] == "numba"]
    return {"verdict": rec["verdict"], "speedup": rec["speedup"], "ci": [rec["ci_low"], rec["ci_high"]],
            "floor": rec["floor"], "basis": rec["basis"], "run": run_id, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=2, help="A/A pairs (each with a one-round sweep between)")
    ap.add_argument("--gap-repeats", type=int, default=20, help="repetitions of the real-gap run")
    ap.add_argument("--keep", metavar="DIR", help="keep the stores here (aa.sqlite, gap.sqlite) to look at later")
    ap.add_argument("--json", metavar="OUT", help="write the figures here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.keep or tmp)
        where.mkdir(parents=True, exist_ok=True)
        aa_store, gap_store = where / "aa.sqlite", where / "gap.sqlite"
        print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        t0 = time.perf_counter()
        bench(aa_store, AA_ARGS, "warm-up (numba cache, automatic ceilings)")
        pairs = []
        for rep in range(args.repeats):
            fig = aa_pair(aa_store, rep)
            pairs.append(fig)
            print(f"A/A #{rep + 1}: {fig['cells']} cells, {fig['verdicts']}, gate exit {fig['gate_exit']}; "
                  f"sweep {fig['wall_default_s'][0]:.1f} / {fig['wall_default_s'][1]:.1f} s with the defaults "
                  f"({fig['rounds']} rounds), {fig['wall_one_round_s']:.1f} s with --rounds 1; other processes "
                  f"took {100 * fig['other_cpu_share']:.0f}% of the CPU (median over cells)", flush=True)
            for c in fig["called"]:
                print(f"    {c}", flush=True)
        gaps = []
        for rep in range(args.gap_repeats):
            g = gap_repeat(gap_store, rep)
            gaps.append(g)
            print(f"gap #{rep + 1}: {g['verdict']} {g['speedup']:.2f}x [{g['ci'][0]:.2f}, {g['ci'][1]:.2f}] "
                  f"same within ±{100 * g['floor']:.0f}% ({g['basis']})", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f} ({time.perf_counter() - t0:.0f} s in all)")

    cells = sum(p["cells"] for p in pairs)
    false = sum(len(p["called"]) for p in pairs)
    worst = max(p["false_share"] for p in pairs)
    gate_ok = all(p["gate_exit"] == 0 for p in pairs)
    faster = sum(g["verdict"] == "faster" for g in gaps)
    wall_default = statistics.median(w for p in pairs for w in p["wall_default_s"])
    wall_one = statistics.median(p["wall_one_round_s"] for p in pairs)
    aa_ok = worst <= AA_TARGET and gate_ok
    gap_ok = faster >= GAP_TARGET * len(gaps)
    print(f"\n(a) A/A: {false} of {cells} cells called faster/slower over {len(pairs)} pairs "
          f"({100 * false / max(cells, 1):.1f}%; worst pair {100 * worst:.1f}%, target <= {100 * AA_TARGET:g}%); "
          f"--fail-on slower exit codes {[p['gate_exit'] for p in pairs]}: {'PASS' if aa_ok else 'FAIL'}")
    print(f"(b) real gap: numba softmax vs numpy at 512x2048 called faster in {faster} of {len(gaps)} runs "
          f"(median speed-up {statistics.median(g['speedup'] for g in gaps):.2f}x; target >= "
          f"{100 * GAP_TARGET:g}%): {'PASS' if gap_ok else 'FAIL'}")
    print(f"(c) sweep time: {wall_default:.1f} s with the defaults ({pairs[0]['rounds']} rounds) against "
          f"{wall_one:.1f} s with --rounds 1 (median sweep wall times): x{wall_default / wall_one:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"aa": pairs, "gap": gaps, "wall_default_s": wall_default,
                                               "wall_one_round_s": wall_one}, indent=1))
    return 0 if aa_ok and gap_ok else 1


if __name__ == "__main__":
    sys.exit(main())

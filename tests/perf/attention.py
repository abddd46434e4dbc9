"""Attention prefill on the CPU: numba flash-style vs torch SDPA, and peak memory vs seq — a script, not a test.

    .venv/bin/python tests/perf/attention.py [--seq 2048] [--heads 32] [--kv-heads 8] [--head-dim 128]
                                             [--rounds 5] [--mem-seqs 256,512,1024,2048] [--small]

Prints, from one run:
1. time per call of ``attention_prefill`` at a Llama-ish shape (default batch 1, 32 heads, 8 KV heads,
   head_dim 128, seq 2048, float32) for numba-flash (numba backend) against torch SDPA's math backend
   (``torch-sdpa-math``), with SDPA's flash backend and its dispatcher's choice for context; the
   contenders are timed in alternating rounds (A B C A B C ...), so load from other processes hits
   them alike; median of ``--rounds``, GFLOP/s of the causal FLOPs, and numba-flash's speed-up over
   each;
2. peak memory (the harness's meaning: inputs + outputs + the largest extra in use during one call,
   by each backend's own meter) at several seq lengths, for the naive forms (numpy, torch: the seq x
   seq scores materialised), SDPA math, and numba-flash, with the extra memory's growth per doubling
   of seq (about 4x for O(seq^2), 2x or less for O(seq)).

Every contender is checked against the float64 reference through the harness first (at the timed size
for part 1; a wrong kernel is never timed).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workbench.backends import all_backends  # noqa: E402
from workbench.catalog import get_kernel, get_variant  # noqa: E402
from workbench.core.dtypes import itemsize  # noqa: E402
from workbench.measure.case import Case  # noqa: E402
from workbench.measure.memory import peak_memory  # noqa: E402

KERNEL, DTYPE = "attention_prefill", "float32"
TIMED = {"numba-flash": "numba", "torch-sdpa-math": "torch-cpu", "torch-sdpa-flash": "torch-cpu",
         "torch-sdpa": "torch-cpu"}
MEMORY = {"numpy-naive": "numpy", "torch-naive": "torch-cpu", "torch-sdpa-math": "torch-cpu",
          "numba-flash": "numba"}


def prepare(variant: str, backend_name: str, params: dict, check: bool = True) -> Case | None:
    """A verified, warmed-up Case, or None (with the reason on stderr) when it fails or cannot run."""
    backend = all_backends()[backend_name]
    backend.require()
    case = Case(get_kernel(KERNEL), get_variant(KERNEL, variant), backend, params, DTYPE, seed=0)
    if check:
        res = case.run_and_check()
        if not res.passed:
            print(f"  !! {variant} on {backend_name} failed verification: {res.message}", file=sys.stderr)
            return None
    case.reference = None  # free the float64 copies before timing
    case.run()
    return case


def interleaved(cases: dict[str, Case], rounds: int) -> dict[str, float]:
    """Median seconds per call of each case, timed in alternating rounds."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(rounds):
        for label, case in cases.items():
            case.backend.synchronize()
            t0 = time.perf_counter()
            case.run()
            case.backend.synchronize()
            times[label].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def resident_bytes(case: Case) -> int:
    """Bytes of the inputs and outputs, as the harness counts them."""
    return (sum(int(a.size) for a in case.host_inputs.values())
            + sum(math.prod(s) for s in case.out_shapes.values())) * itemsize(DTYPE)


def mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5, help="timed calls per contender (median reported)")
    ap.add_argument("--mem-seqs", default="256,512,1024,2048", help="seq lengths of the memory table")
    ap.add_argument("--mem-heads", type=int, default=8, help="heads of the memory table (KV heads: heads/4)")
    ap.add_argument("--small", action="store_true", help="a smoke run: seq 256, 8 heads, 2 rounds")
    args = ap.parse_args(argv)
    if args.small:
        args.seq, args.heads, args.kv_heads, args.rounds, args.mem_seqs = 256, 8, 2, 2, "64,128,256"

    import numba
    import torch

    p = {"batch": 1, "heads": args.heads, "kv_heads": args.kv_heads, "seq": args.seq, "head_dim": args.head_dim}
    get_kernel(KERNEL).validate_params(p)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"numba {numba.__version__} ({numba.get_num_threads()} threads), torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), {DTYPE}\n")

    cases = {v: c for v, b in TIMED.items() if (c := prepare(v, b, p)) is not None}
    sec = interleaved(cases, args.rounds)
    flops = get_kernel(KERNEL).flops(p)
    shape = "x".join(str(v) for v in p.values())
    print(f"attention_prefill {shape} (batch x heads x kv_heads x seq x head_dim), causal, {DTYPE}; "
          f"alternating rounds, median of {args.rounds}")
    base = sec.get("numba-flash")
    for v, s in sec.items():
        vs = "" if v == "numba-flash" or base is None else f"   numba-flash is {s / base:.2f}x its speed"
        print(f"  {v:18s} {s * 1e3:9.1f} ms  {flops / s / 1e9:7.1f} GFLOP/s (causal FLOPs){vs}")
    if base is not None and "torch-sdpa-math" in sec:
        ratio = sec["torch-sdpa-math"] / base
        print(f"  target numba-flash >= SDPA math: {'met' if ratio >= 1 else 'MISSED'} ({ratio:.2f}x)\n")
    del cases

    seqs = [int(s) for s in args.mem_seqs.split(",")]
    kv = max(1, args.mem_heads // 4)
    print(f"peak memory, MiB (inputs + outputs + extra during one call), batch 1, {args.mem_heads} heads, "
          f"{kv} KV heads, head_dim {args.head_dim}, {DTYPE}")
    extra: dict[str, list[int | None]] = {v: [] for v in MEMORY}
    peaks: dict[str, list[int | None]] = {v: [] for v in MEMORY}
    print("  " + "seq".rjust(6) + "".join(f"{v:>18s}" for v in MEMORY) + "   inputs+outputs")
    for s in seqs:
        pm = {**p, "heads": args.mem_heads, "kv_heads": kv, "seq": s}
        line = f"  {s:6d}"
        res = 0
        for v, b in MEMORY.items():
            case = prepare(v, b, pm, check=s <= 1024)
            if case is None:
                line += f"{'-':>18s}"
                extra[v].append(None)
                peaks[v].append(None)
                continue
            res = resident_bytes(case)
            peak, method = peak_memory(case.backend, case.run, res)
            extra[v].append(None if peak is None else peak - res)
            peaks[v].append(peak)
            line += f"{mib(peak):>18s}"
            del case
        print(line + f"{mib(res):>17s}")
    print("  growth of the peak from one seq to the next (x2 per doubling: O(seq); x4: O(seq^2)), and the extra "
          "memory (peak - inputs - outputs) in MiB:")
    for v in MEMORY:
        growth = [f"{b / a:.1f}x" if a and b else "-" for a, b in zip(peaks[v], peaks[v][1:], strict=False)]
        print(f"    {v:18s} peak growth {' '.join(growth):20s} extra " + "  ".join(mib(x) for x in extra[v]))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

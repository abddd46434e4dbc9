"""Execution modes of the decoder blocks at decode shapes: eager vs graph vs fused — a script, not a test.

    .venv/bin/python tests/perf/blocks.py [--block mlp_block] [--shapes 128x352,256x704,896x4864]
                                          [--rounds 7] [--calls 0] [--attention]

For each CPU backend (numpy, numba, torch-cpu, opencl-0 / PoCL) and each decode shape (batch 1, one
token; HIDDENxINTERMEDIATE for the MLP block), every mode's variant is verified against the float64
reference through the harness, then all of them are timed in interleaved rounds (A B C A B C ...: load
from other processes hits them alike). Each round times a batch of calls (sized to ~20 ms); the figure
is the median over rounds of the time per call, with the min-max range of the round figures. graph
and fused variants go through the execution cache, whose statistics are printed at the end.

With ``--attention`` the attention block runs too, at decode (one query token against a KV cache).
It also times, for context on torch-cpu, ``torch.jit.trace`` + ``freeze`` of the block, the other
candidate for torch's CPU ``graph`` (the variant uses the preallocated out= plan).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import workbench  # noqa: E402
from workbench.backends import all_backends  # noqa: E402
from workbench.catalog import get_kernel, variants  # noqa: E402
from workbench.measure.case import Case  # noqa: E402

DTYPE = "float32"
BACKENDS = {"numpy": "numpy", "numba": "numba", "torch": "torch-cpu", "opencl": "opencl-0"}
MODE_ORDER = {"eager": 0, "graph": 1, "fused": 2}


def mlp_shapes(text: str) -> list[dict[str, int]]:
    out = []
    for part in text.split(","):
        h, i = (int(v) for v in part.lower().split("x"))
        out.append({"tokens": 1, "hidden": h, "intermediate": i})
    return out


def attention_shapes(past: int) -> list[dict[str, int]]:
    """Qwen2.5-0.5B's attention (14 heads, 2 KV heads, head_dim 64) and a small one, one decode token."""
    return [{"batch": 1, "seq": 1, "past": past, "hidden": 256, "heads": 4, "kv_heads": 2, "head_dim": 64},
            {"batch": 1, "seq": 1, "past": past, "hidden": 896, "heads": 14, "kv_heads": 2, "head_dim": 64}]


def prepare(kernel: str, variant: str, backend_name: str, params: dict) -> Case | None:
    backend = all_backends()[backend_name]
    if not backend.probe().available:
        return None
    spec = get_kernel(kernel)
    try:
        case = Case(spec, variants(kernel)[variant], backend, params, DTYPE, seed=0)
    except workbench.catalog.Unsupported as exc:
        print(f"  -- {variant} on {backend_name}: unsupported ({exc})")
        return None
    res = case.run_and_check()
    if not res.passed:
        print(f"  !! {variant} on {backend_name} failed verification: {res.message}", file=sys.stderr)
        return None
    case.reference = None
    return case


def calls_per_round(case: Case, backend, target_s: float = 0.02) -> int:
    t = time.perf_counter()
    case.run()
    backend.synchronize()
    one = max(time.perf_counter() - t, 1e-7)
    return max(1, min(2000, int(target_s / one)))


def time_round(case: Case, backend, n: int) -> float:
    inp, out = case.inputs, case.outputs
    call = case.call
    backend.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        call(inp, out)
    backend.synchronize()
    return (time.perf_counter() - t) / n


def compare(kernel: str, params: dict, rounds: int) -> None:
    print(f"\n{kernel} {' '.join(f'{k}={v}' for k, v in params.items())} {DTYPE}")
    for runtime, backend_name in BACKENDS.items():
        vs = sorted((v for v in variants(kernel).values() if runtime in v.runtimes),
                    key=lambda v: MODE_ORDER.get(v.mode, 9))
        backend = all_backends()[backend_name]
        cases = {v.name: c for v in vs if (c := prepare(kernel, v.name, backend_name, params)) is not None}
        if not cases:
            continue
        sizes = {n: calls_per_round(c, backend) for n, c in cases.items()}
        figures: dict[str, list[float]] = {n: [] for n in cases}
        for _ in range(rounds):
            for name, case in cases.items():
                figures[name].append(time_round(case, backend, sizes[name]))
        eager_rounds = next((f for n, f in figures.items() if variants(kernel)[n].mode == "eager"), None)
        eager = statistics.median(eager_rounds) if eager_rounds else None
        for name, f in figures.items():
            med = statistics.median(f)
            vs_eager = f"  {eager / med:5.2f}x eager" if eager else ""
            if eager_rounds and f is not eager_rounds and max(f) < min(eager_rounds):
                vs_eager += "  (every round faster than every eager round)"
            print(f"  {backend_name:10s} {name:16s} {variants(kernel)[name].mode:6s} {med * 1e6:10.1f} us/call "
                  f"(rounds {min(f) * 1e6:.1f}-{max(f) * 1e6:.1f}){vs_eager}")
        del cases


def jit_freeze_context(params: dict, rounds: int) -> None:
    """torch.jit.trace + freeze of the MLP block on the CPU, beside the eager form and the out= plan."""
    import torch

    spec = get_kernel("mlp_block")  # loads the catalog first, so that its modules import
    from workbench_catalog.mlp_block.torch_variants import ARGS, block  # noqa: I001

    backend = all_backends()["torch-cpu"]
    inp = spec.example_inputs(backend, params, DTYPE)
    args = tuple(inp[n] for n in ARGS)
    with torch.no_grad():
        frozen = torch.jit.freeze(torch.jit.trace(_Module(block), args).eval())
        for _ in range(3):
            frozen(*args)
        eager = Case(spec, variants("mlp_block")["torch-eager"], backend, params, DTYPE)
        plan = Case(spec, variants("mlp_block")["torch-graph"], backend, params, DTYPE)
        runs = {"torch-eager": lambda: eager.call(eager.inputs, eager.outputs),
                "jit.trace+freeze": lambda: frozen(*args),
                "out= plan (torch-graph)": lambda: plan.call(plan.inputs, plan.outputs)}
        figures: dict[str, list[float]] = {n: [] for n in runs}
        for _ in range(rounds):
            for name, fn in runs.items():
                t = time.perf_counter()
                for _ in range(200):
                    fn()
                figures[name].append((time.perf_counter() - t) / 200)
    print(f"\ntorch-cpu graph candidates, mlp_block {params}:")
    for name, f in figures.items():
        print(f"  {name:26s} {statistics.median(f) * 1e6:9.1f} us/call")


class _Module:
    """``torch.jit.trace`` wants a module to freeze: a tiny wrapper, built on use (torch imported late)."""

    def __new__(cls, fn):
        import torch

        class Wrapper(torch.nn.Module):
            def forward(self, *args):
                return fn(*args)

        return Wrapper()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="128x352,256x704,896x4864", help="HIDDENxINTERMEDIATE decode shapes")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--attention", action="store_true", help="also the attention block at decode")
    ap.add_argument("--past", type=int, default=512, help="KV cache length of the attention block")
    ap.add_argument("--no-jit", action="store_true", help="skip the torch.jit.trace + freeze comparison")
    args = ap.parse_args()
    workbench.clear_cache()
    for params in mlp_shapes(args.shapes):
        compare("mlp_block", params, args.rounds)
    if args.attention:
        for params in attention_shapes(args.past):
            compare("attention_block", params, args.rounds)
    if not args.no_jit:
        jit_freeze_context(mlp_shapes(args.shapes)[0], args.rounds)
    stats = workbench.execution_stats()
    print("\nexecution cache:", {k: v for k, v in stats.items() if k != "entries"})
    for e in stats["entries"]:
        print(f"  {e['block']}/{e['variant']} {e['backend']} [{e['shape']}] mode={e['mode']} hits={e['hits']} "
              f"recorded in {e['record_s'] * 1e3:.1f} ms" + (f" fallback: {e['fallback']}" if e["fallback"] else ""))


if __name__ == "__main__":
    main()

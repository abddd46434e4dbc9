"""On an NVIDIA GPU: the same torch calls timed by the workbench (kernel and graph timing modes), by nvbench's
Python (``cuda.bench``, PyPI ``cuda-bench``) and by ``triton.testing.do_bench`` / ``do_bench_cudagraph``, mode for
mode, at a launch-bound, an L2-resident and an HBM size read from the device (issue 37, point 9).

Pairs compared (ratio = workbench / other; the issue's target is within 3%):

- workbench ``kernel`` (CUPTI: the call's kernels, first start to last end) vs nvbench's batch GPU time (hot,
  back-to-back under a blocking kernel, launch latency out of the window) — nvbench's cold GPU time is printed too;
- workbench ``graph`` (replays of a captured graph) vs ``do_bench_cudagraph``;
- workbench ``launch`` (events around each call) vs ``do_bench`` (events around each call, L2 flushed between).

Every tool runs ``--repeats`` times, interleaved, and the median of each counts. ``--out`` gets the JSON of every
figure. Without a GPU (or without torch's CUDA build) it exits 1 saying so; a missing cuda-bench or triton leaves
its columns empty, named. Written without a GPU: nvbench's Python API (registering by name, running one benchmark
again with ``-b``, its JSON's summary tags) is used as its examples show and is first exercised on a GPU.
Usage: ``python scripts/gpu/side_by_side.py [--kernels saxpy,sum] [--out f.json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

KERNELS = ("saxpy", "sum", "softmax", "transpose")
SIZES = ("launch", "l2", "hbm")
#: Working set of each size: a launch-bound call (a few microseconds of work at most), a quarter of the L2, and
#: 9x the L2 (past it, to HBM, as the quick suite's GPU size).
LAUNCH_BYTES = 48 * 2**10
#: Benchmarks registered with nvbench in this process (one per kernel and size; a repeat runs it again by name).
_registered: set[str] = set()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="side_by_side.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help=f"comma-separated, of {', '.join(KERNELS)} (default: all)")
    p.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated, of {', '.join(SIZES)} (default: all)")
    p.add_argument("--repeats", type=int, default=3, help="times each tool times each call, interleaved (default 3)")
    p.add_argument("--min-time", type=float, default=0.5, help="nvbench's --min-time in seconds (default 0.5)")
    p.add_argument("--out", type=Path, default=Path("side_by_side.json"), help="JSON of every figure")
    args = p.parse_args(argv)
    for name, valid in (("kernels", KERNELS), ("sizes", SIZES)):
        chosen = [s for s in getattr(args, name).split(",") if s]
        bad = [s for s in chosen if s not in valid]
        if bad or not chosen:
            p.error(f"--{name}: unknown {', '.join(map(repr, bad)) or '(none given)'}; valid: {', '.join(valid)}")
        setattr(args, name, chosen)
    if args.repeats < 1 or not args.min_time > 0:
        p.error(f"--repeats must be >= 1 and --min-time > 0, got {args.repeats} and {args.min_time}")
    return args


def gpu_problem() -> str | None:
    """Why nothing can be timed here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed (a CUDA build of torch is needed)"
    if not torch.cuda.is_available():
        return f"no CUDA GPU is visible to torch {torch.__version__} (torch.cuda.is_available() is False)"
    return None


def calls(kernel: str, nbytes: int) -> tuple[Callable[[], Any], str]:
    """The torch call of ``kernel`` on arrays of about ``nbytes`` moved a call, and its size in words."""
    import torch

    dev = "cuda"
    if kernel == "saxpy":
        n = max(1024, nbytes // 12)
        x, y, o = (torch.randn(n, device=dev) for _ in range(3))
        return (lambda: torch.add(y, x, alpha=1.7, out=o)), f"n={n}"
    if kernel == "sum":
        n = max(1024, nbytes // 4)
        x, o = torch.randn(n, device=dev), torch.empty((), device=dev)
        return (lambda: torch.sum(x, 0, out=o)), f"n={n}"
    side = max(32, int((nbytes / 8) ** 0.5) // 32 * 32)
    x, o = torch.randn(side, side, device=dev), torch.empty(side, side, device=dev)
    if kernel == "softmax":
        return (lambda: torch.softmax(x, dim=1)), f"rows=cols={side}"  # no out=: a pooled allocation a call
    return (lambda: o.copy_(x.t())), f"rows=cols={side}"


def workbench_s(call: Callable[[], Any], mode: str) -> float:
    import workbench

    return workbench.timeit(call, backend="torch-cuda", timing_mode=mode, budget_s=0.3).median_s


def triton_s(call: Callable[[], Any], graph: bool) -> float:
    from triton.testing import do_bench, do_bench_cudagraph

    return (do_bench_cudagraph(call, return_mode="median") if graph else do_bench(call, return_mode="median")) / 1e3


def nvbench_s(call: Callable[[], Any], name: str, min_time: float) -> dict[str, float]:
    """nvbench's batch (hot) and cold GPU mean times of ``call``, registered as benchmark ``name`` and run alone
    (``-b``), read from its JSON output."""
    try:
        import cuda.bench as nvbench
    except ImportError:
        import cuda.nvbench as nvbench  # its name before cuda-bench
    import torch

    def bench(state: Any) -> None:
        stream = torch.cuda.ExternalStream(state.get_stream().addressof())

        def launcher(launch: Any) -> None:
            with torch.cuda.stream(torch.cuda.ExternalStream(launch.get_stream().addressof())):
                call()
        with torch.cuda.stream(stream):
            state.exec(launcher)

    bench.__name__ = bench.__qualname__ = name
    if name not in _registered:
        nvbench.register(bench)
        _registered.add(name)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "nvbench.json"
        nvbench.run_all_benchmarks(["nvbench", "-b", name, "--json", str(out), "--min-time", str(min_time)])
        doc = json.loads(out.read_text())
    found: dict[str, float] = {}
    states = [st for b in doc["benchmarks"] if b.get("name") == name for st in b.get("states") or []]
    for state in states:
        for s in state.get("summaries") or []:
            tag = s.get("tag", "")
            for which in ("batch", "cold"):
                if tag == f"nv/{which}/time/gpu/mean":
                    found[which] = float(next(d["value"] for d in s["data"] if d["name"] == "value"))
    return found


def measure(kernel: str, size: str, nbytes: int, args: argparse.Namespace) -> dict[str, Any]:
    """Every tool's median over ``args.repeats`` interleaved repeats, and the ratios."""
    call, label = calls(kernel, nbytes)
    tools: dict[str, Callable[[], float | None]] = {
        "workbench kernel": lambda: workbench_s(call, "kernel"),
        "workbench graph": lambda: workbench_s(call, "graph"),
        "workbench launch": lambda: workbench_s(call, "launch"),
        "do_bench_cudagraph": lambda: triton_s(call, True), "do_bench": lambda: triton_s(call, False)}
    got: dict[str, list[float]] = {k: [] for k in (*tools, "nvbench batch", "nvbench cold")}
    errors: dict[str, str] = {}
    for _ in range(args.repeats):
        for name, fn in tools.items():
            try:
                got[name].append(fn())
            except Exception as exc:  # noqa: BLE001 - one tool's failure leaves its column empty, named
                errors[name] = f"{type(exc).__name__}: {exc}"
        try:
            nv = nvbench_s(call, f"{kernel}_{size}", args.min_time)
            for which in ("batch", "cold"):
                if which in nv:
                    got[f"nvbench {which}"].append(nv[which])
        except Exception as exc:  # noqa: BLE001
            errors["nvbench"] = f"{type(exc).__name__}: {exc}"
    med = {k: statistics.median(v) if v else None for k, v in got.items()}
    pairs = (("workbench kernel", "nvbench batch"), ("workbench graph", "do_bench_cudagraph"),
             ("workbench launch", "do_bench"))
    ratios = {f"{a} / {b}": med[a] / med[b] for a, b in pairs if med[a] and med[b]}
    return {"kernel": kernel, "size": size, "label": label, "bytes": nbytes, "median_s": med, "samples_s": got,
            "ratios": ratios, "errors": errors}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = gpu_problem()
    if problem:
        print(f"side_by_side.py: {problem}: nothing to time; run it on a machine with an NVIDIA GPU",
              file=sys.stderr)
        return 1
    import torch

    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 50 * 2**20)
    sizes = {"launch": LAUNCH_BYTES, "l2": l2 // 4, "hbm": 9 * l2}
    rows = []
    for kernel in args.kernels:
        for size in args.sizes:
            r = measure(kernel, size, sizes[size], args)
            rows.append(r)
            print(f"{kernel:<10} {size:<6} {r['label']:<18} " + "  ".join(
                f"{k} {v * 1e6:.2f} us" for k, v in r["median_s"].items() if v) + "  |  " + "  ".join(
                f"{k} {v:.3f}" for k, v in r["ratios"].items()) + (f"  errors: {r['errors']}" if r["errors"] else ""))
    args.out.write_text(json.dumps({"device": props.name, "l2_bytes": l2, "rows": rows}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

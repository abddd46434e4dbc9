"""On a GPU: the workbench's timer beside triton's do_bench and a CUDA graph of many calls (no launch gaps),
for one torch op at a launch-bound, an L2-resident and a DRAM-bound size, interleaved, three times each.
Prints per-call medians in µs and the ratio to the graph's device-only time."""
import statistics

import torch
import triton

import workbench

dev = "cuda"
for n in (1 << 16, 1 << 22, 1 << 27):
    x, y, z = (torch.randn(n, device=dev) for _ in range(3))

    def call(x=x, y=y, z=z):
        torch.add(x, y, alpha=2.0, out=z)

    g = torch.cuda.CUDAGraph()
    reps = 50
    call()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        for _ in range(reps):
            call()
    res = {"workbench": [], "do_bench": [], "graph": []}
    for _ in range(3):
        res["workbench"].append(workbench.timeit(call, backend="torch-cuda").median_s * 1e6)
        res["do_bench"].append(triton.testing.do_bench(call, return_mode="median") * 1e3)
        ts = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3 / reps)
        res["graph"].append(statistics.median(ts))
    gbps = 12 * n / (statistics.median(res["graph"]) * 1e-6) / 1e9
    base = statistics.median(res["graph"])
    print(f"n={n:>10d} ({12 * n / 2**20:.1f} MiB moved)  graph {gbps:.0f} GB/s;  " + "  ".join(
        f"{k} {', '.join(f'{v:.1f}' for v in vals)} µs (x{statistics.median(vals) / base:.2f})"
        for k, vals in res.items()))

"""Tutorial: Write your own kernel."""

from _cells import code, md, params

CELLS = [
    md("""
# Write your own kernel

A kernel is a *spec* (inputs, a float64 reference, FLOPs and bytes per call, sizes) plus any number of
*variants*. Here we define `axpby` (`out = 2 x - 0.5 y`) inline, give it a numpy library variant, a
numba variant and a portable device kernel, check all of them against the reference, and benchmark them.
The portable kernel is the same CUDA-C source that CuPy would compile for an NVIDIA or AMD GPU; on a
machine without a GPU it runs through OpenCL on the CPU (PoCL), which checks it there (against the reference,
at the spec's odd "verify" sizes and the seeds named below).
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: the spec's "quick" sizes up to 2**22 on every OpenCL device, ceilings probed
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
STORE = "workbench-results.sqlite"
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.registry import all_backends

import numba
import numpy as np
from workbench.catalog import KernelSpec, register_kernel, unregister_variant, variant

tutorial.begin(FULL, ceilings=not SMALL,  # "% of peak" needs this machine's ceilings: probed on first use
               small=SMALL, leaves_out="seeds 1 and 2 (it verifies with seed 0 alone), the default sizes 2**16 and "
                                       "2**20 (it times 2**12 and 2**16) and the probe of this machine's ceilings. "
                                       "'% peak' is read against ceilings already on record here (from an earlier "
                                       "run or `workbench peaks`, named in the 'ceiling' column), and is empty "
                                       "where there are none")
"""),
    md("""
## The spec: what the kernel computes, how much it moves
"""),
    code("""
ALPHA, BETA = 2.0, -0.5


def make_inputs(p, rng):
    return {"x": rng.standard_normal(p["n"]), "y": rng.standard_normal(p["n"])}


def reference(inp, p):  # float64, the ground truth every variant is checked against
    return {"out": ALPHA * inp["x"] + BETA * inp["y"]}


spec = register_kernel(KernelSpec(
    name="axpby", description="out = 2 x - 0.5 y", axes=("n",),
    make_inputs=make_inputs, reference=reference,
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: 3 * p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,   # read x, read y, write out
    sizes={"verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],   # odd sizes catch tail bugs
           "quick": [{"n": 2**16}, {"n": 2**20}, {"n": 2**22}]},
))
"""),
    md("""
## Variants

A variant is a *builder*: given the backend, sizes and dtype it prepares whatever it needs and returns a
function `run(inputs, outputs)`. The numpy one is numpy's own calls writing into the output (`np.multiply` with
`out=`, then an in-place add of `BETA * y`, which makes one temporary the size of `y`: the lines printed with the
benchmark's table compare its peak memory with numba's), so it is the library baseline: the expression a numpy
user writes, not a traffic-equal loop.
"""),
    code("""
@variant("axpby", "numpy", "numpy", library=True)
def axpby_numpy(ctx):
    def run(inp, out):
        np.multiply(inp["x"], ALPHA, out=out["out"])
        out["out"] += BETA * inp["y"]
    return run


@numba.njit(parallel=True, cache=False)
def _axpby(x, y, out, a, b):
    for i in numba.prange(x.shape[0]):
        out[i] = a * x[i] + b * y[i]


@variant("axpby", "numba", "numba")
def axpby_numba(ctx):
    def run(inp, out):
        _axpby(inp["x"], inp["y"], out["out"], ALPHA, BETA)
    return run
"""),
    md("""
The portable device kernel: a grid-stride loop in the CUDA-C subset. `KERNEL`, `GLOBAL`, `LOAD`, `STORE`
and the index macros are defined per target (CUDA, HIP, OpenCL), so this text compiles for all three.
"""),
    code("""
import tempfile
from pathlib import Path
from workbench.portable import grid_stride, portable_variant

source = Path(tempfile.mkdtemp()) / "axpby.cu"   # any folder will do; the variant records the path
source.write_text('''
KERNEL void axpby(const GLOBAL real* RESTRICT x, const GLOBAL real* RESTRICT y, GLOBAL real* RESTRICT out,
                  acc_t alpha, acc_t beta, int n)
{
    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n; i += GRID_DIM_X * BLOCK_DIM_X)
        STORE(out, i, alpha * LOAD(x, i) + beta * LOAD(y, i));
}
''')
portable_variant("axpby", "portable", source, [grid_stride("axpby", ("x", "y", "out", "alpha", "beta", "n"))],
                 scalars={"alpha": ALPHA, "beta": BETA})
sorted(workbench.variants("axpby"))
"""),
    md("""
## Verify before you time

Each variant runs on the odd "verify" sizes with three seeds (0, 1, 2; a `SMALL` run, the tests', with seed 0
alone); outputs start as NaN, so a kernel that
skips elements cannot pass. A deliberately buggy variant (it forgets the last element) shows what a
failure looks like.
"""),
    code("""
@variant("axpby", "numba-buggy", "numba")
def axpby_buggy(ctx):
    def run(inp, out):  # the off-by-one: the last element is never written
        _axpby(inp["x"][:-1], inp["y"][:-1], out["out"][:-1], ALPHA, BETA)
    return run


def usable(name):  # numpy, numba, and the OpenCL devices that can compile kernels here
    b = all_backends()[name]
    return b.runtime in ("numpy", "numba") or (b.runtime == "opencl" and b.capabilities().compiles_device_code)


here = [b for b in workbench.available_backends() if usable(b)]
if not FULL:  # one OpenCL device is enough to check a portable kernel (FULL: each one)
    opencl = [b for b in here if all_backends()[b].runtime == "opencl"]
    here = [b for b in here if b not in opencl[1:]]
checked = workbench.verify(kernels="axpby", backends=here, seeds=(0,) if SMALL else (0, 1, 2))
# "params" and "seed": the size and seed a row's error (or its first failure) comes from
pd.DataFrame([r.to_dict() for r in checked])[["variant", "backend", "dtype", "status", "params", "seed", "max_error",
                                              "message"]]
"""),
    md("""
## Benchmark against the library (the buggy variant stays out)
"""),
    code("""
sizes = [2**12, 2**16] if SMALL else "quick" if FULL else [2**16, 2**20]
unregister_variant("axpby", "numba-buggy")   # it has made its point; out of the catalog, no benchmark picks it
res = workbench.benchmark(kernel="axpby", backends=here, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                          progress=False)
print(res)
summary = res.summary()
# a disturbed cell's median is no rate to read: its GB/s, GFLOP/s and % peak are not printed either
disturbed = summary["median ± IQR"].astype(str).str.contains("disturbed")
summary.loc[disturbed, [c for c in ("GB/s", "GFLOP/s", "% peak") if c in summary.columns]] = "(disturbed)"
# numpy's temporary (the size of y, said under "Variants"), read from the peak memory column at each size: a
# difference is put down to it only where it matches y's size within 25%
from workbench.core.units import fmt_bytes, fmt_seconds

for size, g in res.df[res.df["status"] == "ok"].groupby("size_label", sort=False):
    peak = dict(zip(g["variant"], g["peak_mem_bytes"], strict=True))
    if {"numpy", "numba"} <= set(peak) and peak["numpy"] > peak["numba"]:
        y, more = float(g["bytes"].iloc[0]) / 3, peak["numpy"] - peak["numba"]   # x, y, out: three arrays alike
        said = (f"about y's size ({fmt_bytes(y)}), numpy's temporary" if abs(more - y) <= 0.25 * y else
                f"{more / y:.0%} of y's size ({fmt_bytes(y)}), so not that temporary (what it is, allocator "
                "granularity or other, is not measured here)")
        print(f"{size}: peak memory {fmt_bytes(peak['numpy'])} for numpy against {fmt_bytes(peak['numba'])} for "
              f"numba: {fmt_bytes(more)} more, {said}")
display(summary.drop(columns="notes"))
# the notes in full, a line each (the table would cut them), and a disturbed cell's quartiles, which its verdict
# compares
for (_, r), (_, raw) in zip(summary.iterrows(), res.df.iterrows(), strict=True):
    quart = (f"quartiles {fmt_seconds(raw['q1_s'])}–{fmt_seconds(raw['q3_s'])}, median not read; "
             if "disturbed" in str(r["median ± IQR"]) else "")
    if quart or str(r["notes"]).strip():
        print(f"{r['variant']} @ {r['backend']} at {r['size']}: {quart}{r['notes']}")
# the cache levels the ceiling column chose among: each level's bandwidth and the working set its probed capacity
# holds (a cell is scored against the innermost level that holds its peak memory, DRAM past them all)
from workbench.report.data import store_peaks
from workbench.roofs.model import CACHE_LEVELS, resolve_roofs, roofs_of_row

roofs = resolve_roofs(res.df, store_peaks(res.store) if res.store is not None else None)
for line in dict.fromkeys(
        "; ".join(f"{x.kind.short} {x.value:.3g} GB/s up to {fmt_bytes(x.working_set_bytes)}"
                  for x in (rs.get(k) for k in CACHE_LEVELS) if x is not None and x.known and x.working_set_bytes)
        for rs in (roofs_of_row(roofs, r) for r in res.df.to_dict("records")) if rs is not None):
    print(f"ceiling levels (probed capacities): {line}; DRAM beyond" if line else
          "ceiling levels: no probed cache capacities on record, so no cell is scored against a cache level")
"""),
    md("""
Two columns say how each time was taken. **timer** is the clock that read each call: `sync+perf_counter` is
the host's clock read after the device has finished, `opencl-profiling` the OpenCL driver's stamps of two markers,
one queued before the call and one after it. **timing mode** is which span a row holds: `host` here, the only one a
CPU device has (docs/gpu-timing.md says which span each timer reads and the GPU's other modes). Rows are compared
only within one timing mode. "median ± IQR" gives the interquartile range of the samples after the ±, a spread,
not an interval (the intervals are the verdicts', below). **ceiling** is the bandwidth "% peak" is taken against:
the innermost cache level whose probed capacity holds the cell's working set (the column's **peak memory**), or
DRAM past every cache, with where the figure came from ("probe": this machine's own probe; a `SMALL` run reads one
already on record, as its banner says).

Each kernel is judged against numpy's library form (`baseline="numpy"`) on paired rounds: a verdict says "faster"
or "slower" only where the interval and the noise floor allow it. The sentences are chosen by the verdicts and
checked against their numbers (`check_claim`); a slower kernel's ratio is said inverted in its sentence (the
table's 0.8× reads "took 1.25× its time"). In the table, "(paired)" in the speed-up header says every verdict was
judged on paired rounds (a **basis** column appears only where some were not); **interval** is the speed-up's
97.5% interval and **floor** the noise floor it was held to (the smallest change this run's noise lets a verdict
name). A comparison whose cells or paired rounds scatter by half or more reads "disturbed" and prints no ratio;
README.md and docs/statistics.md give the rule and the notes such a line carries.
"""),
    code("""
from workbench.report.busy_caveat import shared_machine_advice
from workbench.report.claim_notes import NoteBlock
from workbench.report.claims import check_claim, disturbance_text, mark_busy, verdict_claim, verdict_table

table = mark_busy(res.speedup(baseline="numpy"), res.df)   # a busy pair's verdict names its load and rerun advice
table = table[table["verdict"] != "baseline"]
verdicts = NoteBlock()   # each verdict's head on its line, each reason once in the numbered notes under them
for _, v in table.iterrows():
    base, other = f"{v['baseline_variant']} @ {v['baseline_backend']}", f"{v['variant']} @ {v['backend']}"
    at = res.df[(res.df["status"] == "ok") & (res.df["size_label"] == v["size_label"])
                & res.df["variant"].isin([v["variant"], v["baseline_variant"]])]
    claim = verdict_claim(v, base, other, disturbance_text(at))   # a disturbed one says by what
    check_claim(v, claim.text())   # the whole sentence, and the head printed on its line
    check_claim(v, claim.head)
    verdicts.add(v["size_label"], claim)
print(verdicts)
for name in res.df["backend"].unique():   # what an OpenCL row's speed is the speed of
    info = workbench.device_info(name)
    if all_backends()[name].runtime == "opencl" and info.get("kind") == "cpu":
        print(f"{name} runs on {info['name']}, an OpenCL device that is this CPU: its rows check the portable "
              "kernel and time it on this CPU; they say nothing about a GPU's speed")
if shared_machine_advice(res.df[res.df["status"] == "ok"]):   # how the load's marks above bear on the verdicts
    print(f"({shared_machine_advice(res.df[res.df['status'] == 'ok'])})")
verdict_table(table, ["variant", "backend", "size_label", "baseline_variant"])
"""),
    md("""
Without `variants=`, each backend runs the variants written for its runtime: numpy's on numpy, numba's
on numba, the portable kernel on OpenCL. (Variants named explicitly are tried on every selected backend,
and the pairs that cannot meet are recorded as `unsupported` with the reason.)
"""),
    code("""
res.plot(metric="gbps")
""", "figure"),
]

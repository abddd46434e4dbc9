"""Generate the tutorial notebooks from this one script, without outputs: ``python notebooks/_build.py``.

Every notebook has one cell tagged ``parameters`` (papermill style) whose
knobs the tests override to run at small sizes, and tags the cells that must
draw a figure with ``figure`` so the tests can check they did.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

PARAMS_DOC = "# Parameters (papermill style): the tests run every notebook with SMALL = True and tiny budgets.\n"


def md(text: str) -> dict:
    return new_markdown_cell(text.strip("\n"))


def code(text: str, *tags: str) -> dict:
    cell = new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def params(text: str) -> dict:
    return code(PARAMS_DOC + text.strip("\n"), "parameters")


SETUP = """
%matplotlib inline
import pandas as pd
import workbench
from workbench.backends.registry import all_backends

pd.set_option("display.max_colwidth", 80)
"""

#: Shared by the tutorials that compare two variants: the package's verdict decides the wording, and
#: ``check_claim`` asserts that the sentence printed says what the verdict and its numbers say.
VERDICT_HELPERS = '''
import math

from workbench.ceilings import fmt_bytes
from workbench.stats_compare import judge_pair, speedup_vs_baseline


def pair_verdicts(df, base, other, backend):
    """``other`` against ``base`` on one backend, per size: the package's paired verdict
    (speedup = time(base) / time(other), so above 1 means ``other`` is faster)."""
    rows = df[(df["status"] == "ok") & (df["backend"] == backend) & df["variant"].isin([base, other])]
    table = speedup_vs_baseline(rows, baseline_variant=base, baseline_backend=backend)
    return table[table["variant"] == other]


def verdict_sentence(v, base, other):
    """The comparison in words, chosen by the verdict (same / faster / slower / ambiguous)."""
    s, floor = v["speedup"], v["floor"]
    if v["verdict"] == "faster":
        return f"{other} ran {s:.2f}× faster than {base}"
    if v["verdict"] == "slower":
        return f"{base} was faster: {other} took {1 / s:.2f}× its time"
    if v["verdict"] == "same":
        return f"{other} and {base} ran the same within the noise ({s:.2f}× measured, floor ±{floor:.0%})"
    if v["verdict"] == "ambiguous":
        return (f"no call between {other} and {base}: {s:.2f}× is beyond the ±{floor:.0%} floor, but its "
                f"interval {v['ci_low']:.2f}-{v['ci_high']:.2f}× does not settle the direction")
    return f"no call between {other} and {base}: {v['verdict']}"


def check_claim(v, sentence):
    """The sentence says what the verdict says, and the verdict agrees with the numbers it rests on."""
    verdict, s = v["verdict"], v["speedup"]
    assert ("× faster than" in sentence) == (verdict == "faster"), (sentence, verdict)
    assert ("was faster" in sentence) == (verdict == "slower"), (sentence, verdict)
    assert ("the same within the noise" in sentence) == (verdict == "same"), (sentence, verdict)
    if verdict == "faster":
        assert s > 1 and v["ci_low"] > 1, (sentence, dict(v))
    if verdict == "slower":
        assert s < 1 and v["ci_high"] < 1, (sentence, dict(v))
    if verdict == "same":
        assert abs(math.log(s)) <= math.log1p(v["floor"]) + 1e-9, (sentence, dict(v))
    if verdict == "ambiguous":
        assert abs(math.log(s)) > math.log1p(v["floor"]) and v["ci_low"] <= 1 <= v["ci_high"], (sentence, dict(v))


def llc_bytes(backend):
    """The last-level cache of the backend's device (None where the device does not say)."""
    return workbench.device_info(backend).get("last_level_cache_bytes")


def cache_text(nbytes, llc):
    """Whether a working set fits in the last-level cache, in words."""
    if not llc:
        return f"working set {fmt_bytes(nbytes)} (last-level cache size unknown)"
    verb = "fits in" if nbytes <= llc else "exceeds"
    return f"working set {fmt_bytes(nbytes)} {verb} the {fmt_bytes(llc)} last-level cache"
'''

NOTEBOOKS: dict[str, list[dict]] = {}

NOTEBOOKS["dashboard"] = [
    md("""
# Kernel Workbench dashboard

Pick backends (unavailable ones are greyed out, with the reason beside them), a kernel, its variants,
sizes, dtype, modes and cache state, then press **Run**. The sweep runs in the background: the plot and
the table update after every cell, the line under the progress bar names the running cell and its elapsed
time, **Cancel** stops the running cell at once (its worker process is ended) and keeps every finished row,
and the export buttons write the run as HTML, Markdown, CSV or JSON under the folder you choose.

Results are also stored in `workbench-results.sqlite` beside this notebook, so nothing is lost if the
kernel dies. The same dashboard works in JupyterLab and as a Voila app
(`voila notebooks/dashboard.ipynb`).
"""),
    params("""
EXPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code("""
from workbench.ui import Dashboard

dashboard = Dashboard(store=STORE, export_dir=EXPORT_DIR)
dashboard
"""),
]

NOTEBOOKS["01_quickstart"] = [
    md("""
# Quickstart: what this machine has, one comparison, one plot, one export

The workbench compares implementations (*variants*) of one operation (*kernel*) across runtimes
(*backends*). Every measurement is checked against a float64 reference first, timed until its spread is
small or its budget runs out, and stored as one tidy row.
"""),
    params("""
SMALL = False      # True: tiny sizes, to check that the notebook runs
BUDGET_S = 0.5     # timing budget per measured cell, in seconds
REPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code(SETUP),
    md("""
## What this machine has

Every backend the workbench knows, available or not. An unavailable one says why and how to fix it;
nothing here imports a GPU runtime unless its adapter is probed.
"""),
    code("""
rows = []
for name, b in all_backends().items():
    probe = b.probe()
    rows.append({"backend": name, "runtime": b.runtime, "available": probe.available,
                 "device or reason": b.device_info().name if probe.available else probe.reason})
pd.DataFrame(rows).sort_values(["available", "backend"], ascending=[False, True])
"""),
    code("""
print("picked automatically:", workbench.get_backend().name)
print("available, best first:", workbench.available_backends())
"""),
    md("""
## One comparison

`saxpy` (`out = 1.7 x + y`) reads two arrays and writes one: 12 bytes per element in float32 for 2 FLOPs.
No processor can feed its arithmetic units from memory at that ratio, so the time is set by bandwidth and
**GB/s** is the number to look at. `benchmark` runs every variant of the kernel on every available backend.
"""),
    code("""
sizes = [2**12, 2**16] if SMALL else [2**16, 2**20, 2**23]
res = workbench.benchmark(kernel="saxpy", sizes=sizes, budget_s=BUDGET_S, store=STORE, progress=False)
res
"""),
    md("""
## One plot

Bandwidth against size; the shaded band is the interquartile range of the samples. Small arrays fit in
cache (and pay a fixed launch cost), large ones stream from DRAM. An OpenCL backend may be a GPU or, through
PoCL, this machine's CPU; the cell after the plot says which each one is here.
"""),
    code("""
res.plot(metric="gbps")
""", "figure"),
    code("""
for name in res.df["backend"].unique():
    b, info = all_backends()[name], workbench.device_info(name)
    if b.runtime == "opencl":
        on_cpu = info.get("kind") == "cpu"
        print(f"{name} runs on {info['name']} ({info.get('kind')}): " + (
            "OpenCL on the CPU (PoCL), which checks that a portable kernel is correct and says nothing about "
            "GPU speed" if on_cpu else "a real OpenCL device, so its speed is that device's"))
"""),
    md("Speed-ups against the library call, with 95% intervals from the rounds and a verdict "
       "(same / faster / slower / ambiguous):"),
    code("""
res.speedup()[["variant", "backend", "size_label", "speedup", "ci_low", "ci_high", "verdict"]]
"""),
    md("""
## One export

A single self-contained HTML file (figures embedded, nothing fetched) that a colleague can open anywhere.
`res.to_markdown`, `res.to_csv` and `res.to_json` write the other formats; the JSON export can be
imported into another machine's store (see `07_reports`).
"""),
    code("""
path = res.to_html(f"{REPORT_DIR}/quickstart.html")
print("wrote", path)
"""),
]

NOTEBOOKS["02_backends_and_devices"] = [
    md("""
# Backends and devices

A backend is one runtime on one device. Each adapter answers the same questions: is it available (and if
not, why), what device is it, what can it do, how much memory does it use, how does it time a kernel.
This notebook asks every backend those questions.
"""),
    params("""
SMALL = False
"""),
    code(SETUP + "import os, subprocess, sys\n"),
    md("## Availability and the reason when not"),
    code("""
backends = all_backends()
pd.DataFrame([{"backend": n, "runtime": b.runtime, "device class": b.device_class, "priority": b.priority,
               "available": b.probe().available, "reason": b.probe().reason}
              for n, b in sorted(backends.items(), key=lambda kv: (kv[1].priority, kv[0]))])
"""),
    md("## Device information and capabilities"),
    code("""
available = workbench.available_backends()
info = {n: workbench.device_info(n) for n in available}
pd.DataFrame({n: {k: v for k, v in d.items() if k not in ("versions", "extra")} for n, d in info.items()})
"""),
    code("""
pd.DataFrame({n: backends[n].capabilities().to_dict() for n in available})
"""),
    md("Runtime and library versions recorded with every result (they decide speed as much as the hardware):"),
    code("""
for n, d in info.items():
    print(f"{n:10s}", ", ".join(f"{k} {v}" for k, v in d["versions"].items()))
"""),
    md("""
## Timers

Where a runtime has device events (CUDA, OpenCL profiling) the harness uses them; otherwise it
synchronizes and reads the wall clock. The kind is stored in every row (`timer_kind`).
"""),
    code("""
{n: backends[n].timer().kind for n in available}
"""),
    md("""
## Memory

Each backend measures memory its own way (the allocator's counters on a GPU, tracemalloc for numpy,
the process high-water mark for numba) and says which: compare numbers only when the method matches.
"""),
    code("""
import numpy as np

b = backends["numpy"]
b.reset_peak_memory()
before = workbench.memory_info("numpy")
x = b.from_numpy(np.ones(2**20 if SMALL else 2**24, dtype=np.float32))
after = workbench.memory_info("numpy")
del x
pd.DataFrame({"before": before, "after allocating": after})
"""),
    md("""
## Automatic choice and the `WORKBENCH_BACKEND` override

Without instructions the workbench picks the best available backend by priority
(CUDA/ROCm > XPU > MPS > vendor plugins > OpenCL GPU > CPU). The environment variable
`WORKBENCH_BACKEND` overrides the choice; `workbench.set_backend(name)` does the same in code.
"""),
    code("""
print("automatic:", workbench.get_backend().name)
print("priority order:", available)
"""),
    code("""
def backend_in_fresh_process(value):
    env = {**os.environ, "WORKBENCH_BACKEND": value}
    out = subprocess.run([sys.executable, "-c", "import workbench; print(workbench.get_backend().name)"],
                         env=env, capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]

for value in ["auto", "numpy", available[-1], "torch-cuda"]:
    print(f"WORKBENCH_BACKEND={value:12s} -> {backend_in_fresh_process(value)}")
"""),
    code("""
workbench.set_backend("numpy")
print("now:", workbench.get_backend().name)
workbench.set_backend("auto")
print("back to:", workbench.get_backend().name)
"""),
]

NOTEBOOKS["03_write_your_own_kernel"] = [
    md("""
# Write your own kernel

A kernel is a *spec* (inputs, a float64 reference, FLOPs and bytes per call, sizes) plus any number of
*variants*. Here we define `axpby` (`out = 2 x - 0.5 y`) inline, give it a numpy library variant, a
numba variant and a portable device kernel, check all of them against the reference, and benchmark them.
The portable kernel is the same CUDA-C source that CuPy would compile for an NVIDIA or AMD GPU; on a
machine without a GPU it runs through OpenCL on the CPU (PoCL), which proves it correct there.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
STORE = "workbench-results.sqlite"
"""),
    code(SETUP + """
import numba
import numpy as np
from workbench.catalog import KernelSpec, register_kernel, variant
"""),
    md("## The spec: what the kernel computes, how much it moves"),
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
function `run(inputs, outputs)`. The numpy one is what most people would write first, so it is the
library baseline.
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

Each variant runs on the odd "verify" sizes with several seeds; outputs start as NaN, so a kernel that
skips elements cannot pass. A deliberately buggy variant (it forgets the last element) shows what a
failure looks like.
"""),
    code("""
@numba.njit(parallel=True)
def _axpby_off_by_one(x, y, out, a, b):
    for i in numba.prange(x.shape[0] - 1):
        out[i] = a * x[i] + b * y[i]


@variant("axpby", "numba-buggy", "numba")
def axpby_buggy(ctx):
    def run(inp, out):
        _axpby_off_by_one(inp["x"], inp["y"], out["out"], ALPHA, BETA)
    return run


def usable(name):  # numpy, numba, and the OpenCL devices that can compile kernels here
    b = all_backends()[name]
    return b.runtime in ("numpy", "numba") or (b.runtime == "opencl" and b.capabilities().compiles_device_code)


here = [b for b in workbench.available_backends() if usable(b)]
checked = workbench.verify(kernels="axpby", backends=here, seeds=(0,) if SMALL else (0, 1, 2))
pd.DataFrame([r.to_dict() for r in checked])[["variant", "backend", "dtype", "status", "max_error", "message"]]
"""),
    md("## Benchmark against the library (the buggy variant stays out)"),
    code("""
sizes = [2**12, 2**16] if SMALL else "quick"
res = workbench.benchmark(kernel="axpby", variants=["numpy", "numba", "portable"], backends=here,
                          sizes=sizes, budget_s=BUDGET_S, store=STORE, progress=False)
print(res)
summary = res.summary()
summary[summary["status"] != "unsupported"]
"""),
    md("""
Named variants are tried on every selected backend, and the pairs that cannot meet (the numba variant
on numpy, ...) are recorded as `unsupported` with the reason, so the count above includes them; the
table shows the rest.
"""),
    code("""
res.plot(metric="gbps")
""", "figure"),
]

NOTEBOOKS["04_gemm_naive_tiled_library"] = [
    md("""
# GEMM: naive, tiled, library

`out = a @ b` with `a: m×k`, `b: k×n` does `2mnk` FLOPs on `(mk + kn + mn)` elements: its arithmetic
intensity (FLOPs per byte) grows with size, so unlike saxpy it *can* be compute-bound — if the kernel
reuses data. A naive kernel reloads a row of `a` and a column of `b` for every output element; a tiled
kernel loads blocks into shared/local memory once and reuses them `TILE` times; the library (BLAS,
cuBLAS) adds register blocking, vector instructions and threads. Whether tiling pays *here* is measured
below, per backend.

The **roofline** puts each cell at (intensity, GFLOP/s) under `min(peak FLOP/s, intensity × peak GB/s)`,
where the peaks are this machine's measured *ceilings*. That roof bounds a kernel whose data streams from
the memory the bandwidth ceiling was measured on. A point can sit above it: when its working set lives in
a cache faster than that memory, or when the ceiling itself was measured low (a short probe, a busy
machine). The cells after the plot count the points above their ceiling and say which reason applies to
each.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
MEASURE_PEAKS = True   # the longer `workbench peaks` measurement (about a minute per backend); CI skips it
STORE = "workbench-results.sqlite"
"""),
    code(SETUP + VERDICT_HELPERS),
    code("""
print(workbench.get_kernel("gemm").description)
pd.DataFrame([{"variant": n, "mode": v.mode, "runtimes": ", ".join(v.runtimes), "library": v.library,
               "description": v.description} for n, v in workbench.variants("gemm").items()])
"""),
    md("""
## The ceilings

The first benchmark on a backend in this environment measures its ceilings automatically: a short
STREAM-like triad and a GEMM, a few seconds per backend, stored with the method "automatic probe" and
reused afterwards. `workbench peaks` (or `measure_peaks`) measures longer and better, and wins over the
probe. Every row names the ceiling its "% of peak" used (`ceiling_gbps`, `ceiling_gflops`,
`ceiling_source`: measured by `workbench peaks`, by the automatic probe, or the published figure).
"""),
    code("""
if MEASURE_PEAKS:
    from workbench.peaks import measure_peaks
    for p in measure_peaks(["numpy"], store=STORE):
        print(p.backend, p.metric, p.dtype, p.value, p.unit, "-", p.method)
else:
    print("skipped: the benchmark below measures the ceilings with its short automatic probe")
"""),
    md("## Naive vs tiled vs library"),
    code("""
sizes = [(32, 32, 32), (64, 64, 64)] if SMALL else [(128, 128, 128), (256, 256, 256), (512, 512, 512)]
res = workbench.benchmark(kernel="gemm", sizes=sizes, budget_s=BUDGET_S, store=STORE, progress=False)
res
"""),
    code("""
res.plot(metric="gflops")
""", "figure"),
    md("""
Where a variant is missing above, the table says why (e.g. no device to compile for). Hollow markers
are noisy cells: their time varied more than the noise threshold, or the machine was busy.

### Did tiling pay?

Per backend that ran both, the tiled kernel against the naive one, judged by the package's paired
verdict; the explanation printed is the one that fits the verdict and the working set's size against
the device's last-level cache.
"""),
    code("""
ok = res.df[res.df["status"] == "ok"]
tiling = []
for backend, g in ok.groupby("backend", sort=True):
    names = set(g["variant"])
    for naive in sorted(n for n in names if n.endswith("-naive")):
        tiled = naive.replace("-naive", "-tiled")
        if tiled not in names:
            continue
        for _, v in pair_verdicts(ok, naive, tiled, backend).iterrows():
            sentence = verdict_sentence(v, naive, tiled)
            check_claim(v, sentence)
            nbytes = float(g.loc[g["size_label"] == v["size_label"], "bytes"].iloc[0])
            llc = llc_bytes(backend)
            where = cache_text(nbytes, llc)
            if v["verdict"] == "faster":
                why = f"tiling pays: each block it loads is reused for a whole tile of outputs ({where})."
            elif v["verdict"] == "slower":
                why = (f"the {where}, so the naive kernel's reloads are cache hits and the tiled kernel's staging "
                       "(copies into local memory, barriers) costs more than the reuse saves." if llc and nbytes <= llc
                       else f"the tiled kernel's staging costs more than its reuse saves ({where}).")
            else:
                why = f"no difference that the noise lets us call ({where})."
            assert ("tiling pays" in why) == (v["verdict"] == "faster"), why
            tiling.append(f"{backend}, {v['size_label']}: {sentence}; {why}")
print(chr(10).join(tiling) or "no backend ran both a naive and a tiled kernel here")
if any(all_backends()[b].runtime == "opencl" and workbench.device_info(b).get("kind") == "cpu" for b in ok["backend"]):
    print("(opencl on a CPU is PoCL: the portable kernels' order there checks them, it does not predict a GPU)")
"""),
    md("### The fastest cell per size"),
    code("""
fastest = ok.loc[ok.groupby("size_label", sort=False)["median_s"].idxmin()]
for _, r in fastest.iterrows():
    others = ok[(ok["size_label"] == r["size_label"]) & (ok.index != r.name)]
    runner = others.loc[others["median_s"].idxmin()] if len(others) else None
    if runner is None:
        print(f"{r['size_label']}: only {r['variant']} @ {r['backend']} ran")
        continue
    v = judge_pair(runner, r)   # the runner-up as baseline: "faster" only if the gap beats the noise
    sentence = verdict_sentence(v, f"{runner['variant']} @ {runner['backend']}", f"{r['variant']} @ {r['backend']}")
    check_claim(v, sentence)
    print(f"{r['size_label']}: lowest median time {r['variant']} @ {r['backend']} "
          f"({r['gflops']:.3g} GFLOP/s); against the runner-up, {sentence}")
"""),
    md("""
## The roofline
"""),
    code("""
res.plot(kind="roofline")
""", "figure"),
    md("""
Points above their roof are ringed, and the text under the plot says why. The cell below works the same
out from the rows: a point is above its ceiling when its `pct_peak_bw` or `pct_peak_flops` (against the
ceiling its row names) exceeds 100, and the reason depends on whether its working set fits in the
device's last-level cache.
"""),
    code("""
from workbench.ceilings import row_peak_note

for size, g in ok.groupby("size_label", sort=False):
    print(f"{size}: {cache_text(float(g['bytes'].iloc[0]), llc_bytes(g['backend'].iloc[0]))}")

rows = []
for _, r in ok.iterrows():
    llc = llc_bytes(r["backend"])
    bw, fl = r["pct_peak_bw"], r["pct_peak_flops"]
    above_bw, above_fl = bool(pd.notna(bw) and bw > 100), bool(pd.notna(fl) and fl > 100)
    rows.append({"variant": r["variant"], "backend": r["backend"], "size_label": r["size_label"],
                 "pct_peak_bw": bw, "pct_peak_flops": fl, "above": above_bw or above_fl,
                 "cache_resident": above_bw and bool(llc) and r["bytes"] <= llc,
                 "why": row_peak_note(r.to_dict(), llc)})   # worked out from the row's current percentages
roof = pd.DataFrame(rows)
above = roof[roof["above"]]
n, m = len(above), len(roof)
if n == 0:
    print(f"Every one of the {m} points sits under its roof: at most {roof['pct_peak_bw'].max():.0f}% of its "
          f"bandwidth ceiling and {roof['pct_peak_flops'].max():.0f}% of its GFLOP/s ceiling.")
else:
    cached = int(above["cache_resident"].sum())
    parts = []
    if cached:
        parts.append(f"{cached} run above the DRAM bandwidth slope because their working set is cache-resident "
                     "(the slope bounds data that streams from memory, not data that stays in cache)")
    if n - cached:
        parts.append(f"{n - cached} point to the ceiling itself: it was measured low (see each reason)")
    print(f"{n} of {m} points sit above their ceiling: " + "; ".join(parts) + ".")
    for _, r in above.iterrows():
        print(f"  {r['variant']} @ {r['backend']} {r['size_label']}: {r['why']}")
# what was said matches the rows: the points called above are exactly those over 100%, each with its reason
assert (n == 0) == (roof[["pct_peak_bw", "pct_peak_flops"]].max(axis=1, skipna=True).fillna(0) <= 100).all()
assert all(above["why"] != ""), "every point above its ceiling has a reason"
assert all(("fits in" in w) == c for w, c in zip(above["why"], above["cache_resident"]) if "bandwidth" in w)
roof
"""),
]

NOTEBOOKS["05_memory_bound_fusion"] = [
    md("""
# Memory-bound fusion: do the bytes moved decide the time?

`bias_gelu` (`gelu(x + bias)`) and `rmsnorm_residual` (`h = x + residual; out = rmsnorm(h) * w`) do a
handful of FLOPs per element, far below what the processor could do while the data streams in. If their
time is (bytes moved) / (bandwidth), fusion should pay: written *eagerly* as separate array operations,
every intermediate is written to memory and read back; a *fused* kernel reads each input once and writes
each output once; a *compiler* (`torch.compile`) can fuse for you.

That is the hypothesis. Whether it holds on this machine, at these sizes, is measured below: every
backend that has both an unfused and a fused (or compiled) variant gets a verdict from the rounds
(faster, slower, or the same within the noise), and the text under each table is chosen from that
verdict, with the explanation that fits what was measured. The spec counts only the compulsory bytes, so
the GB/s column is the same bytes divided by each variant's time: a slower variant shows a lower GB/s.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
MODES = ["eager", "fused", "compiled"]   # "compiled" variants compile on their first call
STORE = "workbench-results.sqlite"
"""),
    code(SETUP + VERDICT_HELPERS),
    code("""
for k in ["bias_gelu", "rmsnorm_residual"]:
    print(k, "->", {n: v.mode for n, v in workbench.variants(k).items()})
"""),
    md("""
## What fusion did, per backend

`fusion_findings` pairs, on each backend, every fused or compiled variant with the unfused (eager) one
and asks the package for a verdict (`speedup_vs_baseline`: paired round by round, so drift common to
both cancels; "same" when the difference is within the noise floor). It returns the sentences it prints
and asserts that each says what its verdict and numbers say.
"""),
    code("""
def fusion_why(v, backend, variant, nbytes):
    \"\"\"The explanation that fits the verdict, from what is known about the device and the working set.\"\"\"
    llc = llc_bytes(backend)
    in_cache = bool(llc) and nbytes <= llc
    where = cache_text(nbytes, llc)
    b = all_backends()[backend]
    pocl = b.runtime == "opencl" and workbench.device_info(backend).get("kind") == "cpu"
    caveat = (" PoCL runs the OpenCL kernels on this CPU's cores: it checks that they are correct, and its "
              "timings say nothing about a GPU." if pocl else "")
    if v["verdict"] == "faster":
        if in_cache:
            return ("The unfused variant makes an extra pass, writing its intermediate and reading it back; the "
                    f"{where}, so that pass costs cache bandwidth and a second loop rather than DRAM traffic."
                    + caveat)
        return ("Consistent with bytes deciding time: the unfused variant makes an extra pass, writing its "
                f"intermediate to memory and reading it back ({where})." + caveat)
    if v["verdict"] == "same":
        if v["floor"] > 0.5:
            return (f"The rounds varied too much to call a difference (noise floor ±{v['floor']:.0%}: a busy "
                    f"machine or a short budget); the {where}." + caveat)
        if in_cache:
            return (f"Fusion saved nothing measurable here: the {where}, so the intermediate's round trip "
                    "stays in cache and costs little; sizes that stream from DRAM are where the saved bytes can show."
                    + caveat)
        return f"The traffic fusion saves did not show above the noise ({where})." + caveat
    if v["verdict"] == "slower":
        how = workbench.variants(v["kernel"])[variant].description.split(chr(10))[0]
        reason = (f"the {where}, so the bytes fusion saves are cheap, and the fused kernel's other costs weigh "
                  "more" if in_cache else f"the fused kernel's other costs outweigh the traffic it saves ({where})")
        return f"Likely why: {reason}. (The fused variant: {how.rstrip('.')}.)" + caveat
    return (f"The rounds do not settle which is faster ({where}); more budget (BUDGET_S) or an idle machine "
            "would." + caveat)


def fusion_findings(res):
    ok = res.df[res.df["status"] == "ok"]
    lines, checked = [], 0
    for backend, g in ok.groupby("backend", sort=True):
        eager = sorted(set(g.loc[g["mode"] == "eager", "variant"]))
        fused = sorted(set(g.loc[g["mode"].isin(["fused", "compiled"]), "variant"]))
        if not eager or not fused:
            lines.append(f"{backend}: only {', '.join(sorted(set(g['variant'])))} ran here: no fused/unfused pair")
            continue
        for f in fused:
            for _, v in pair_verdicts(ok, eager[0], f, backend).iterrows():
                sentence = verdict_sentence(v, eager[0], f)
                check_claim(v, sentence)
                nbytes = float(g.loc[g["size_label"] == v["size_label"], "bytes"].iloc[0])
                why = fusion_why(v, backend, f, nbytes)
                # the explanation's branch matches the verdict and the cache fact it cites
                assert ("makes an extra pass" in why) == (v["verdict"] == "faster"), why
                assert ("Likely why" in why) == (v["verdict"] == "slower"), why
                llc = llc_bytes(backend)
                assert ("fits in" in why) == bool(llc and nbytes <= llc), why
                lines.append(f"{backend}, {v['size_label']}: on this machine {sentence}. {why}")
                checked += 1
    pairs = ok.groupby("backend")["mode"].agg(lambda m: "eager" in set(m) and bool({"fused", "compiled"} & set(m)))
    assert checked >= int(pairs.sum()), "every backend with a fused/unfused pair gets a verdict"
    print(chr(10).join(lines))
    return lines
"""),
    md("## bias + GELU"),
    code("""
sizes = [(64, 1024)] if SMALL else [(1024, 1024), (2048, 4096)]
gelu = workbench.benchmark(kernel="bias_gelu", sizes=sizes, mode=MODES, budget_s=BUDGET_S, store=STORE,
                           progress=False)
gelu
"""),
    code("""
gelu.plot(metric="time")
""", "figure"),
    code("""
gelu_findings = fusion_findings(gelu)
"""),
    md("""
Where fusion was faster and the working set streams from DRAM, the time ratio estimates how many more
bytes the unfused variant moved; where the data sits in cache, or the verdict is "same", it does not.
The table keeps every variant's time against the unfused variant of its own backend:
"""),
    code("""
def time_vs_unfused(res):
    ok = res.df[res.df["status"] == "ok"]
    out = ok[["variant", "backend", "mode", "size_label", "median_s", "gbps", "noisy"]].copy()
    unfused = ok[ok["mode"] == "eager"].groupby(["backend", "size_label"])["median_s"].min()
    out["time / unfused (same backend)"] = [
        row.median_s / unfused.get((row.backend, row.size_label), float("nan")) for row in out.itertuples()]
    return out

time_vs_unfused(gelu)
"""),
    md("## RMSNorm with the residual add"),
    code("""
norm = workbench.benchmark(kernel="rmsnorm_residual", sizes=sizes, mode=MODES, budget_s=BUDGET_S, store=STORE,
                           progress=False)
norm_findings = fusion_findings(norm)
time_vs_unfused(norm)
"""),
    code("""
norm.plot(metric="gbps")
""", "figure"),
]

NOTEBOOKS["06_llm_shapes"] = [
    md("""
# LLM shapes

Benchmarks at powers of two can miss the sizes that matter. `workbench.datasets` ships the layer shapes
of common transformer models (from their published configs); each kernel spec maps
(batch, seq, hidden, intermediate, ...) to its own sizes — RMSNorm runs on `batch·seq` rows of `hidden`
columns, the MLP's GELU on `batch·seq × intermediate`. Here we sweep them in two dtypes.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
DTYPES = ["float32", "float16"]
STORE = "workbench-results.sqlite"
"""),
    code(SETUP + VERDICT_HELPERS + """
import json

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from workbench.api import Results
from workbench.datasets import llm_shapes            # the table of model shapes
from workbench.report.styles import series_key, styles_for
from workbench.report.units import fmt_tick_time
from workbench.stats_compare import row_times
from workbench.store import open_store
from workbench.suites import llm_shapes as layer_cases  # model shape x batch x seq, ready for a sweep
from workbench.sweep import SweepSpec, run_sweep
from workbench.verdicts import typical_noise
"""),
    code("""
llm_shapes()[["model", "family", "hidden", "intermediate", "heads", "kv_heads", "layers"]]
"""),
    code("""
if SMALL:
    cases = layer_cases(models=["gpt2"], batch_sizes=[1], seq_lengths=[16, 64])
else:
    cases = layer_cases(models=["gpt2", "llama-3-8b"], batch_sizes=[1, 4], seq_lengths=[128, 512])
spec = workbench.get_kernel("rmsnorm")


def size_key(params):
    \"\"\"A measured size as a hashable key (rows store their parameters as JSON).\"\"\"
    params = params if isinstance(params, dict) else json.loads(params)
    return tuple(sorted((k, int(v)) for k, v in params.items()))


# Each model's shapes in order, labelled batch·seq; two cases that map onto one size share its label.
shape_labels = {}   # model -> {size key: "b1·s512 = b4·s128"}
for c in cases:
    key = size_key(spec.validate_params(spec.llm_params(c)))
    shape_labels.setdefault(c["model"], {}).setdefault(key, []).append(f"b{c['batch']}·s{c['seq']}")
shape_labels = {m: {k: " = ".join(v) for k, v in sorted(d.items(), key=lambda kv: dict(kv[0])["rows"])}
                for m, d in shape_labels.items()}
pd.DataFrame([{**{k: c[k] for k in ("model", "batch", "seq", "hidden")}, **spec.llm_params(c)} for c in cases])
"""),
    md("""
## RMSNorm at those shapes, in each dtype

Half precision halves the bytes a kernel moves. Whether that makes it faster depends on the backend
computing in half precision efficiently, which is measured here rather than assumed. Both dtypes run in
one sweep: every round measures each cell of both in a shuffled order, so a variant's float16 and
float32 rows are compared round by round and the machine's drift cancels. A variant that does not
implement a dtype is recorded as `unsupported` with the reason, not silently dropped.
"""),
    code("""
outcome = run_sweep(SweepSpec(kernels=["rmsnorm"], dtypes=DTYPES, llm_shapes=cases, budget_s=BUDGET_S),
                    store=open_store(STORE), name="rmsnorm at LLM shapes", progress=False)
both = Results(outcome.results(), [outcome.run_id], outcome.store)
both
"""),
    md("""
One panel per model (their widths differ), the model's shapes in order along x, one colour per
variant@backend (the report's colours), solid for float32 and dashed for float16:
"""),
    code("""
ok = both.df[both.df["status"] == "ok"].copy()
ok["key"] = [size_key(p) for p in ok["params"]]
styles = styles_for(both.df)
models = list(shape_labels)
fig, axes = plt.subplots(1, len(models), figsize=(4.6 * len(models) + 2.4, 3.6), squeeze=False)
for ax, model in zip(axes[0], models):
    order = list(shape_labels[model])
    sub = ok[ok["key"].isin(order)]
    for (variant, backend, dtype), g in sub.groupby(["variant", "backend", "dtype"], sort=True):
        g = g.assign(x=[order.index(k) for k in g["key"]]).sort_values("x")
        style = styles[series_key(variant, backend)]
        ax.plot(g["x"], g["median_s"], marker=style.marker, color=style.color, ms=4,
                ls="-" if dtype == "float32" else "--", label=f"{variant} @ {backend}, {dtype}")
    ax.set_xticks(range(len(order)), [shape_labels[model][k] for k in order])
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: fmt_tick_time(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    hidden = dict(order[0])["cols"]
    ax.set_title(f"rmsnorm at {model} shapes (hidden {hidden})")
    ax.set_xlabel("batch·seq")
    ax.set_ylabel("time per call")
    ax.grid(True, alpha=0.3)
axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False)
fig.tight_layout()
plt.show()
""", "figure"),
    md("""
## What float16 did, per backend

Every variant@backend that ran both dtypes: float16 against float32 at each shape, judged by the
package's paired verdict (speed-up = time(float32) / time(float16)). The explanation printed for each
backend is the one that fits its verdicts; the cell asserts that every sentence says what its numbers say.
"""),
    code("""
pairs = []   # (variant, backend, label, float32 row, float16 row)
for (variant, backend, key), g in ok.groupby(["variant", "backend", "key"], sort=True):
    d = g.set_index("dtype")
    if {"float32", "float16"} <= set(d.index):
        label = "; ".join(f"{m} {labels[key]}" for m, labels in shape_labels.items() if key in labels)
        pairs.append((variant, backend, label, d.loc["float32"], d.loc["float16"]))
diffs = []
for *_, a, b in pairs:
    (ta, ra), (tb, rb) = row_times(a), row_times(b)
    if ra and rb and len(ta) == len(tb):
        diffs.append(np.log(ta) - np.log(tb))
typical = typical_noise(diffs)   # the run's typical paired spread, as speedup_vs_baseline uses

verdicts = []
for variant, backend, label, a, b in pairs:
    v = judge_pair(a, b, typical)
    sentence = verdict_sentence(v, "float32", "float16")
    check_claim(v, sentence)
    verdicts.append({"variant": variant, "backend": backend, "shape": label, "speedup": v["speedup"],
                     "floor": v["floor"], "verdict": v["verdict"], "sentence": sentence})
    print(f"{variant} @ {backend}, {label}: {sentence}")
table = pd.DataFrame(verdicts)
"""),
    code("""
def fp16_why(backend, counts, speedups):
    \"\"\"The explanation that fits a series' verdicts (one reading only where every shape agrees).\"\"\"
    n = sum(counts.values())
    if counts.get("slower", 0) == n:
        if all_backends()[backend].runtime == "numpy":
            return ("numpy has no float16 arithmetic of its own: it converts every element to float32 and back "
                    "in software, which costs far more than halving the bytes saves.")
        return "computing in float16 cost this backend more than halving the bytes saved."
    if counts.get("faster", 0) == n:
        top = max(speedups)
        return ("consistent with float16 moving half the bytes" + (
            f"; the best gain ({top:.2f}×) is more than the 2× that halving the bytes alone explains"
            if top > 2 else "") + ".")
    if counts.get("same", 0) == n:
        return "halving the bytes made no difference the noise lets us call at these shapes."
    return "the shapes disagree (see the verdict per shape above): no single reading holds here."


summary = []
for (variant, backend), g in table.groupby(["variant", "backend"], sort=True) if len(table) else []:
    counts = g["verdict"].value_counts().to_dict()
    speedups = g["speedup"].tolist()
    what = ", ".join(f"{k} at {n} of {len(g)}" for k, n in counts.items())
    span = (f"float16 took {1 / max(speedups):.2g}-{1 / min(speedups):.2g}× the float32 time"
            if len(g) > 1 else f"float16 took {1 / speedups[0]:.2g}× the float32 time")
    why = fp16_why(backend, counts, speedups)
    # what the sentence says follows the verdicts it counts
    assert sum(counts.values()) == len(g)
    assert ("no float16 arithmetic" in why) == (all_backends()[backend].runtime == "numpy"
                                                and counts.get("slower", 0) == len(g)), why
    assert ("half the bytes" in why) == (counts.get("faster", 0) == len(g)), why
    assert ("disagree" in why) == (max(counts.values()) < len(g)), why
    summary.append(f"{variant} @ {backend}: float16 against float32 was {what} shapes ({span}): {why}")
print(chr(10).join(summary) or "no variant ran both dtypes here")

bad = both.df[(both.df["status"] != "ok") & (both.df["dtype"] == "float16")]
for (variant, backend), g in bad.groupby(["variant", "backend"]):
    print(f"{variant} @ {backend}: float16 {g['status'].iloc[0]}: {str(g['message'].iloc[0]).splitlines()[0]}")
"""),
    code("""
ok.pivot_table(index=["variant", "backend", "size_label"], columns="dtype", values="median_s")
"""),
]

NOTEBOOKS["07_reports"] = [
    md("""
# Reports: compare runs with confidence, merge machines, export

A benchmark result is only useful if a colleague can trust and reproduce it. Every row carries its raw
samples and a link to the environment that produced it (CPU, GPU, driver, library versions, threads).
This notebook compares two runs with calibrated verdicts (the noise across rounds and runs decides),
merges runs from another machine, and exports the lot.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
REPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code(SETUP + """
import numba
from workbench.api import Results
from workbench.stats_compare import compare_runs
from workbench.store import Store
"""),
    md("""
## Two runs that differ in one thing

Run A uses every core numba has; run B pins numba to one thread. numpy's variant is unchanged, so its
verdict should be *same*: whatever moved its time between the runs lies within the noise measured across
rounds and runs. numba's should be *slower* in run B where a second core pays off; at small sizes (where
waking a thread costs about as much as it saves) or on a busy machine (where other processes take the
second core) the difference may stay within the floor and read *same* or *ambiguous* — never a
confident call the noise does not support.
"""),
    code("""
sizes = [2**14, 2**18] if SMALL else [2**16, 2**20, 2**23]
here = [b for b in ("numpy", "numba") if b in workbench.available_backends()]
threads = numba.get_num_threads()
# isolation="in-process": numba.set_num_threads acts on this process only, and by default cells run in
# worker processes that would never see it; both runs are measured the same way, so they stay comparable.
run_a = workbench.benchmark(kernel="saxpy", backends=here, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                            progress=False, name=f"numba {threads} threads", isolation="in-process")
numba.set_num_threads(1)
try:
    run_b = workbench.benchmark(kernel="saxpy", backends=here, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                                progress=False, name="numba 1 thread", isolation="in-process")
finally:
    numba.set_num_threads(threads)
print(run_a.run_id, run_b.run_id, f"(numba threads: {threads} in run A, 1 in run B)")
"""),
    code("""
store = Store(STORE)
df = store.results([run_a.run_id, run_b.run_id])
cmp = compare_runs(df, run_a.run_id, run_b.run_id)
cols = ["variant", "backend", "size_label", "speedup", "ci_low", "ci_high", "floor", "noisy", "verdict"]
cmp[[c for c in cols if c in cmp]]
"""),
    code("""
# What the table says, per variant: the reading below comes from this run, not from the text above.
for variant, g in cmp.groupby("variant"):
    counts = g["verdict"].value_counts()
    print(f"{variant:6s}", ", ".join(f"{v}: {n}" for v, n in counts.items()),
          f"(speed-ups {g['speedup'].min():.2f}-{g['speedup'].max():.2f}, floors up to ±{g['floor'].max():.0%})")
"""),
    md("""
`speedup` is `median(A) / median(B)`: below 1 means run B is slower. A verdict says "faster" or "slower"
only when the difference exceeds the noise floor (`floor`, from the noise measured across rounds and runs)
and its interval excludes no change; a difference within the floor is "same", and one beyond it whose
interval does not settle the direction is "ambiguous". `noisy` marks cells measured while their time
varied a lot or the machine was busy.
"""),
    code("""
# The rules just stated, checked on this table: every verdict follows from its speed-up, interval and floor.
import math

def rule(r):
    effect, floor = math.log(r["speedup"]), math.log1p(r["floor"])
    if abs(effect) <= floor + 1e-9:
        return "same"
    if effect > 0 and r["ci_low"] > 1:
        return "faster"
    if effect < 0 and r["ci_high"] < 1:
        return "slower"
    return "ambiguous"

judged = cmp[cmp["verdict"].isin(["same", "faster", "slower", "ambiguous"])]
assert all(rule(r) == r["verdict"] for _, r in judged.iterrows()), judged

# The expectations above against what was measured (B = numba on one thread; "slower" = B slower).
expected = {"numpy": {"same"}, "numba": {"slower", "same", "ambiguous"} if threads > 1 else {"same"}}
for variant, g in cmp.groupby("variant"):
    got = g["verdict"].value_counts().to_dict()
    held = set(got) <= expected.get(variant, set(got))
    reading = ", ".join(f"{v} at {n} of {len(g)} sizes" for v, n in got.items())
    print(f"{variant}: run B against run A: {reading}; " + ("as the text above expects" if held else
          "not what the text above expects; the floors printed above say how much noise the machine added"))
    if set(got) == {"same"} and g["floor"].max() > 0.5:
        print(f"  the floor reached ±{g['floor'].max():.0%}: the rounds varied too much to see a difference smaller "
              "than that, so 'same' here means 'no difference this noisy machine can show'")
    if variant == "numba" and "slower" in got:
        sizes_slower = ", ".join(g.loc[g["verdict"] == "slower", "size_label"])
        print(f"  one thread was slower beyond the noise at {sizes_slower}: the second core paid off there")
"""),
    code("""
Results(df, [run_a.run_id, run_b.run_id], store).plot(metric="time")
""", "figure"),
    md("""
## Merge runs from another machine

Each machine exports its runs to one JSON file (`workbench export`, `Store.export`, or the dashboard's
JSON button); another store imports it (`workbench import`). Here the "other machine" is simulated: its
store is a fresh file that receives our export, as a colleague's store would, and then records a run
of its own. Importing is idempotent and only parses JSON — nothing from the file is executed.
"""),
    code("""
from pathlib import Path

export = store.export([run_a.run_id], Path(REPORT_DIR) / "machine-a.json")
colleague = Path(REPORT_DIR) / "colleague.sqlite"
colleague.unlink(missing_ok=True)
merged = Store(colleague)
print("imported:", merged.import_file(export))
print("again:   ", merged.import_file(export))
run_c = workbench.benchmark(kernel="saxpy", backends=["numpy"], sizes=sizes, budget_s=BUDGET_S, store=merged,
                            progress=False, name="colleague")
merged.runs()[["run_id", "name", "env_id", "status"]]
"""),
    code("""
from workbench.report import write_report

ids = [run_a.run_id, run_c.run_id]
for fmt in ("html", "md", "csv", "json"):
    print("wrote", write_report(merged, ids, Path(REPORT_DIR) / f"merged.{fmt}"))
"""),
]


def _extra_notebooks() -> dict[str, list[dict]]:
    """Notebooks defined in their own ``notebooks/_nb_<stem>.py`` (each exports ``CELLS``, built with
    :func:`md`, :func:`code` and :func:`params` from this module), so that a new tutorial is one new file."""
    import importlib.util
    import sys

    sys.modules.setdefault("_build", sys.modules[__name__])
    found = {}
    for f in sorted(Path(__file__).resolve().parent.glob("_nb_*.py")):  # HERE is where notebooks are written
        spec = importlib.util.spec_from_file_location(f.stem, f)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        found[f.stem[len("_nb_"):]] = mod.CELLS
    return found


def build() -> list[Path]:
    written = []
    for stem, cells in {**NOTEBOOKS, **_extra_notebooks()}.items():
        nb = new_notebook(cells=cells)
        for i, cell in enumerate(nb.cells):
            cell.id = f"{stem.replace('_', '-')}-{i:02d}"
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        nbformat.validate(nb)
        path = HERE / f"{stem}.ipynb"
        nbformat.write(nb, path)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in build():
        print(p.relative_to(HERE.parent))

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

NOTEBOOKS: dict[str, list[dict]] = {}

NOTEBOOKS["dashboard"] = [
    md("""
# Kernel Workbench dashboard

Pick backends (unavailable ones are greyed out, with the reason beside them), a kernel, its variants,
sizes, dtype, modes and cache state, then press **Run**. The sweep runs in the background: the plot and
the table update after every cell, **Cancel** stops after the current cell and keeps every finished row,
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
cache (and pay a fixed launch cost), large ones stream from DRAM. A portable kernel on `opencl-0` runs on
the CPU through PoCL here: that checks it is *correct*, it says nothing about GPU speed.
"""),
    code("""
res.plot(metric="gbps")
""", "figure"),
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
The portable kernel is the same CUDA-C source that CuPy would compile for an NVIDIA or AMD GPU; here it
runs through OpenCL on the CPU (PoCL), which proves it correct on a machine without a GPU.
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
reuses data. A naive kernel reloads a row of `a` and a column of `b` for every output element and stays
memory-bound; a tiled kernel loads blocks into shared/local memory once and reuses them `TILE` times; the
library (BLAS, cuBLAS) adds register blocking, vector instructions and threads.

The **roofline** shows this at a glance: each point sits under `min(peak FLOP/s, intensity × peak GB/s)`,
where the peaks are this machine's *ceilings* — unless its data comes from a cache faster than the memory
the bandwidth ceiling was measured on. The plot says so for every point above its roof.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
MEASURE_PEAKS = True   # the longer `workbench peaks` measurement (about a minute per backend); CI skips it
STORE = "workbench-results.sqlite"
"""),
    code(SETUP),
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
Where a variant is missing above, the table says why (e.g. no device to compile for). On PoCL the
portable kernels' *relative* order (tiled above naive) is meaningful; their absolute speed is not a GPU's.
Hollow markers are noisy cells: their time varied more than the noise threshold, or the machine was busy.
"""),
    code("""
res.plot(kind="roofline")
""", "figure"),
    md("""
Points above their roof are ringed, and the text under the plot says why. At these sizes a GEMM's
operands (`(mk + kn + mn)` elements: 48 KiB at 64³ in float32, 3 MiB at 512³) fit in the last-level cache,
so the kernel is fed faster than the DRAM bandwidth the slope was measured with: the slope bounds data
that streams from memory, not data that stays in cache. A point above the flat GFLOP/s roof points at the
ceiling instead (a short automatic probe, or one measured while the machine was busy). The rows say the
same in `peak_note`:
"""),
    code("""
ok = res.df[res.df["status"] == "ok"]
cols = ["variant", "backend", "size_label", "gflops", "pct_peak_flops", "pct_peak_bw", "ceiling_source", "peak_note"]
ok.loc[ok["peak_note"].fillna("") != "", cols] if (ok["peak_note"].fillna("") != "").any() else "no % of peak above 100"
"""),
]

NOTEBOOKS["05_memory_bound_fusion"] = [
    md("""
# Memory-bound fusion: bytes moved decide time

`bias_gelu` (`gelu(x + bias)`) and `rmsnorm_residual` (`h = x + residual; out = rmsnorm(h) * w`) do a
handful of FLOPs per element: far below what the processor could do while the data streams in. So their
time is (bytes moved) / (bandwidth). Written *eagerly* as separate array operations, every intermediate
is written to memory and read back; a *fused* kernel reads each input once and writes each output once; a
*compiler* (`torch.compile`) can fuse for you. The spec counts only the compulsory bytes, so an unfused
variant shows a lower "GB/s": it is moving more bytes than the spec credits it for.
"""),
    params("""
SMALL = False
BUDGET_S = 0.5
MODES = ["eager", "fused", "compiled"]   # "compiled" variants compile on their first call
STORE = "workbench-results.sqlite"
"""),
    code(SETUP),
    code("""
for k in ["bias_gelu", "rmsnorm_residual"]:
    print(k, "->", {n: v.mode for n, v in workbench.variants(k).items()})
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
    md("""
If bytes decide time, the unfused variant's extra time is its extra traffic: dividing its time by the
fused time of the same backend estimates how many times more data it moves.
"""),
    code("""
def traffic_ratio(res):
    ok = res.df[res.df["status"] == "ok"]
    fused = ok[ok["mode"] == "fused"].set_index(["backend", "size_label"])["median_s"]
    out = ok[["variant", "backend", "mode", "size_label", "median_s", "gbps"]].copy()
    out["time vs fused (same backend)"] = [
        row.median_s / fused.get((row.backend, row.size_label), float("nan")) for row in out.itertuples()]
    return out

traffic_ratio(gelu)
"""),
    md("## RMSNorm with the residual add"),
    code("""
norm = workbench.benchmark(kernel="rmsnorm_residual", sizes=sizes, mode=MODES, budget_s=BUDGET_S, store=STORE,
                           progress=False)
traffic_ratio(norm)
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
    code(SETUP + """from workbench.api import Results
from workbench.datasets import llm_shapes            # the table of model shapes
from workbench.suites import llm_shapes as layer_cases  # model shape x batch x seq, ready for a sweep
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
pd.DataFrame([{**{k: c[k] for k in ("model", "batch", "seq", "hidden")}, **spec.llm_params(c)} for c in cases])
"""),
    md("""
## RMSNorm at those shapes, in each dtype

Half precision halves the bytes, so a memory-bound kernel should run up to twice as fast — if the backend
computes in half precision efficiently. A variant that does not implement a dtype is recorded as
`unsupported` with the reason, not silently dropped.
"""),
    code("""
runs = [workbench.benchmark(kernel="rmsnorm", llm_shapes=cases, dtype=d, budget_s=BUDGET_S, store=STORE,
                            progress=False) for d in DTYPES]
both = Results(pd.concat([r.df for r in runs], ignore_index=True), store=runs[0].store)
both
"""),
    code("""
both.plot(metric="gbps")
""", "figure"),
    code("""
ok = both.df[both.df["status"] == "ok"]
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
run_a = workbench.benchmark(kernel="saxpy", backends=here, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                            progress=False, name=f"numba {threads} threads")
numba.set_num_threads(1)
try:
    run_b = workbench.benchmark(kernel="saxpy", backends=here, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                                progress=False, name="numba 1 thread")
finally:
    numba.set_num_threads(threads)
print(run_a.run_id, run_b.run_id)
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


def build() -> list[Path]:
    written = []
    for stem, cells in NOTEBOOKS.items():
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

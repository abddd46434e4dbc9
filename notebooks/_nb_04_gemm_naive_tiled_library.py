"""Tutorial: GEMM: naive, tiled, library."""

from _cells import code, md, params

CELLS = [
    md("""
# GEMM: naive, tiled, library

`out = a @ b` with `a: m×k`, `b: k×n` does `2mnk` FLOPs on `(mk + kn + mn)` elements: its arithmetic
intensity (FLOPs per byte) grows with size, so unlike saxpy it *can* be compute-bound — if the kernel
reuses data. A naive kernel reloads a row of `a` and a column of `b` for every output element. A "tiled"
kernel reuses blocks: on a GPU (`portable-tiled`, `wgsl-tiled`) it stages `TILE x TILE` blocks in shared
memory; on the CPU `numba-tiled` does more than tile: it packs `b` into panels, keeps `MR x NB` accumulator
tiles in L1 for a vectorized inner loop, and hands row blocks to the cores (its description below). The
library (BLAS, cuBLAS) adds its own register blocking, vector instructions and threads. Whether the tiled
variant pays *here* is measured below, per backend that runs: a comparison of two whole variants, not of tiling
alone. The default run measures numpy's library call and numba's naive and tiled kernels on the CPU at 128³ and
256³; `FULL = True` adds 512³ and every backend (the GPU tiled variants where a device runs them); a `SMALL` run
(the tests) only checks that the notebook runs, at 32³ and 64³, and says so at its start.

The **roofline** puts each cell at (intensity, GFLOP/s) under `min(peak FLOP/s, intensity × peak GB/s)`,
where the peaks are this machine's measured *ceilings*. That roof bounds a kernel whose data streams from
the memory the bandwidth ceiling was measured on. A point can sit above it: when its working set lives in
a cache faster than that memory, or when the ceiling itself was measured low (a short probe, a busy
machine). The cells after the plot count the points above their ceiling and say which reason applies to
each.
"""),
    params("""
SMALL = False          # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False           # True: 512³ as well, on every backend: OpenCL, torch, Vulkan too (several minutes)
BUDGET_S = 0.2         # timing budget per measured cell, in seconds
MEASURE_PEAKS = False  # True: the longer `workbench peaks` measurement first (about a minute per backend)
STORE = "workbench-results.sqlite"
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.registry import all_backends
from workbench.report.claims import (cache_text, check_claim, last_level_cache_bytes, machine_busy,
                                     may_state_cause, noisy_cells_text,
                                     pair_verdicts, reading, settled_direction, verdict_claim)
from workbench.report.claim_notes import Claim, NoteBlock
from workbench.judge.compare import judge_pair
from workbench.report.busy_caveat import shared_machine_advice
from workbench.report.ceiling_share import library_ceiling_text, under_roofs_text

tutorial.begin(FULL, ceilings=True, small=SMALL,
                leaves_out="the sizes the questions are asked at (128³ and 256³; 512³ with FULL) and the GPU tiled "
                           "variants (portable-tiled, wgsl-tiled), which run only with FULL. Whether tiling pays and "
                           "how the library compares are not answered by its 32³ and 64³")
"""),
    code("""
print(workbench.get_kernel("gemm").description)
pd.DataFrame([{"variant": n, "mode": v.mode, "runtimes": ", ".join(v.runtimes), "library": v.library,
               "description": v.description} for n, v in workbench.variants("gemm").items()])
"""),
    md("""
## The ceilings

The first benchmark on a backend in this environment measures its ceilings automatically: a short
STREAM-like triad and a GEMM, a few seconds per backend, stored with the method "automatic probe" and
reused afterwards. `workbench peaks` (or `measure_peaks`, run below when `MEASURE_PEAKS = True`) measures
for longer; a ceiling it stores is used instead of the probe's. Every row names the ceiling its "% of peak"
used (`ceiling_gbps`, `ceiling_gflops`, `ceiling_source`: measured by `workbench peaks`, by the automatic
probe, or the published figure); which ones this run used is printed after the benchmark. On a CPU the probe's
GEMM ceiling is the BLAS library numpy calls (`numpy.matmul`, at the probe's own size and at the probe's moment);
at other sizes (a small GEMM is mostly the call's overhead), and with the machine's speed moving between the probe
and the run, numpy's own GEMM can read far below or above it: the lines after the benchmark print the share it
read at each size, and call it near only from 80% of the ceiling up. That roof says how close a hand-written kernel
comes to the library on this machine, not how close the library comes to the hardware's peak (the published
figure, where one is known, says that).
"""),
    code("""
if MEASURE_PEAKS:
    from workbench.roofs.peaks import measure_peaks
    for p in measure_peaks(["numpy"], store=STORE):
        # a measurement that failed says why, and the automatic probe stands in for it
        got = f"{p.value:.3g} {p.unit} ({p.method})" if p.value is not None else f"not measured: {p.method}"
        print(p.backend, p.metric, p.dtype, got)
else:
    print("skipped: the benchmark below measures the ceilings with its short automatic probe")
"""),
    md("""
## Naive vs tiled vs library
"""),
    code("""
# default: 128³ and 256³; FULL adds 512³; SMALL: 32³ and 64³, only to check that the notebook runs
sizes = [(32, 32, 32), (64, 64, 64)] if SMALL else [(128, 128, 128), (256, 256, 256)] + [(512, 512, 512)] * FULL
# a finding of a SMALL run's sizes says so (tutorial.of_small_sizes): 32³ cannot say whether tiling pays
scope = f" {tutorial.of_small_sizes(', '.join(f'{m}³' for m, _, _ in sizes))}" if SMALL else ""
# the library call and numba's naive and tiled kernels; FULL: every backend (each probes its own ceilings first)
backends = tutorial.backends_for(FULL, ["numpy", "numba"])
res = workbench.benchmark(kernel="gemm", backends=backends, sizes=sizes, budget_s=BUDGET_S, store=STORE, progress=False)
res
"""),
    code("""
res.plot(metric="gflops")
""", "figure"),
    code("""
# the ceiling each backend's "% of peak" was computed against, as its rows record it
for backend, g in res.df[res.df["status"] == "ok"].groupby("backend"):
    sources = sorted(set(g["ceiling_source"].dropna().astype(str))) or ["none: % of peak left empty"]
    print(f"{backend}: {'; '.join(sources)}")
# how close the library read to that ceiling, size by size: "near" only from NEAR_SHARE of it up, with the share
said = library_ceiling_text(res.df[res.df["status"] == "ok"])
for line in said:
    print(line)
if said:   # the probe's GFLOP/s ceiling is numpy.matmul's own rate: near it is the library near its own best
    print("(The GFLOP/s ceiling is the rate the probe measured of the same BLAS call, numpy.matmul, at its own size: "
          "near it means the library ran near its own best rate here, not near the hardware's peak.)")
"""),
    md("""
Where a variant is missing from the plot, its row in `res.df` says why (`status` and `message`: e.g. no
device to compile for). Hollow markers are noisy cells, each for the reason its row gives (`noise_note`): its
rounds varied more than the noise threshold, or other processes used more than 25% of the CPU while it ran (on a
shared machine that alone marks every cell).

### Did the tiled variant pay?

Per backend that ran both, the tiled kernel against the naive one, judged by the package's paired
verdict; the explanation printed is the one that fits the verdict and the working set's size against
the device's last-level cache, and names what the tiled variant changes (its catalog description), since a
gain is that whole variant's, not one technique's.
"""),
    code("""
ok = res.df[res.df["status"] == "ok"]
tiling = NoteBlock()   # each verdict's head on its line, each reason once in the numbered notes under them
for backend, g in ok.groupby("backend", sort=True):
    names = set(g["variant"])
    for naive in sorted(n for n in names if n.endswith("-naive")):
        tiled = naive.replace("-naive", "-tiled")
        if tiled not in names:
            continue
        for _, v in pair_verdicts(ok, naive, tiled, backend).iterrows():
            claim = verdict_claim(v, naive, tiled)
            check_claim(v, claim.text())   # the whole sentence, and the head printed on its line
            check_claim(v, claim.head)
            nbytes = float(g.loc[g["size_label"] == v["size_label"], "bytes"].iloc[0])
            llc = last_level_cache_bytes(backend)
            where = cache_text(nbytes, llc)
            said = reading(v)   # a cause only under a settled, undisturbed verdict (claims.may_state_cause)
            # the rows count compulsory bytes only, so they cannot show which cache level a kernel's re-reads
            # came from: the verdict and the working set's place are said, the mechanism is not
            unmeasured = ("the rows count each kernel's compulsory bytes only, so how often each re-read its inputs, "
                          "and from which level, is not measured here")
            does = workbench.variants("gemm")[tiled].description.rstrip(".")
            does = does[:1].lower() + does[1:]
            # the explanation's head (its verdict on tiling, with the working set's place) on the line; what the
            # variant changes and what the rows cannot show go to the notes, said once for every line
            if may_state_cause(v) and said == "faster":
                # no mechanism: which re-reads it saved, and from which level, is not measured (note below)
                why = f"the tiled variant pays ({where})"
                more = (f"the tiled variant changes more than tiling: {does}",
                        f"{unmeasured}, nor which of its changes bought or cost the time")
            elif may_state_cause(v) and said == "slower":
                # no cause: neither what the variant adds nor what its reuse saves is measured here, so the
                # sentence weighs neither against the other
                why = f"the tiled variant did not pay ({where})"
                more = (f"the tiled variant changes more than tiling: {does}",
                        f"{unmeasured}, nor which of its changes bought or cost the time")
            elif said in ("faster", "slower") or settled_direction(v):
                why, more = where, ("no cause is given while the comparison is disturbed or its size unsettled",)
            else:   # "could not tell", in the head: the noise lets us call no difference
                why, more = where, ()
            assert ("variant pays" in why) == (may_state_cause(v) and said == "faster"), why
            # a cause stated of cells that are all marked noisy says so (the machine's state beside the cause)
            cells = g[(g["size_label"] == v["size_label"]) & g["variant"].isin([naive, tiled])]
            if may_state_cause(v) and said in ("faster", "slower") and noisy_cells_text(cells):
                more += (noisy_cells_text(cells),)
            tiling.add(f"{backend}, {v['size_label']}", Claim(f"{claim.head}; {why}", (*more, *claim.reasons)))
if scope:
    tiling.footnote(scope.strip())
print(tiling if tiling.lines else "no backend ran both a naive and a tiled kernel here")
# the shared-machine advice is printed once, under the library's verdicts below, for both lists
if any(all_backends()[b].runtime == "opencl" and workbench.device_info(b).get("kind") == "cpu" for b in ok["backend"]):
    print("(opencl on a CPU is PoCL: the portable kernels' order there checks them, it does not predict a GPU)")
"""),
    md("""
### The library against the best hand-written kernel

Per size, the fastest library call (BLAS through numpy, or torch) against the fastest kernel written here,
judged by the same paired verdict; the sentence quotes only its paired speed-up (the per-cell median GFLOP/s
above are each cell's own headline, not this comparison's estimate). Both sides are usually multi-threaded (BLAS's
threads, numba's `prange`): where other processes were using the CPU, the line says so and names each side's
threads, whichever side measured slower, since either loses most when its threads wait for a core.
"""),
    code("""
library = ok["library"].astype(bool)
ran = res.df[res.df["median_s"].notna()]   # timed, whatever its status (a cell set aside still ran)
compared = []   # the rows each line below compares
against = NoteBlock()   # the verdicts, each reason once in the numbered notes under them
for size, g in ok.groupby("size_label", sort=False):
    lib, hand = g[library[g.index]], g[~library[g.index]]
    if lib.empty or hand.empty:
        # which side is missing: never ran, or ran and was set aside for its status (its row says why)
        side = "library call" if lib.empty else "hand-written kernel"
        aside = ran[(ran["size_label"] == size) & (ran["status"] != "ok")
                    & (ran["library"].astype(bool) == lib.empty)]
        against.add(size, "no comparison: " + (
            f"the {side} ran but was set aside for its status ("
            + "; ".join(f"{r['variant']} @ {r['backend']}: {r['status']}" for _, r in aside.iterrows()) + ")"
            if len(aside) else f"no {side} ran at this size"))
        continue
    a, b = lib.loc[lib["median_s"].idxmin()], hand.loc[hand["median_s"].idxmin()]
    v = judge_pair(a, b)   # the library as baseline: "faster" only if the kernel's gain beats the noise
    # the rows' machine state picks the rerun advice (a busy pair: rerun idle, not more rounds)
    claim = verdict_claim(v, f"{a['variant']} @ {a['backend']}", f"{b['variant']} @ {b['backend']}",
                          busy=machine_busy(pd.DataFrame([a, b])))
    check_claim(v, claim.text())   # the whole sentence, and the head printed on its line
    check_claim(v, claim.head)
    compared += [a, b]
    # one statistic: the paired speed-up the verdict rests on; the cells' own median GFLOP/s are in the table
    # above, labelled so, and may differ from it when rounds disagree (a median is not this estimate)
    against.add(size, claim)
if scope and against.lines:
    against.footnote(scope.strip())
print(against)
# on a shared machine, every multi-threaded side (the rows' threads column) carries the caveat, whichever measured
# slower; said once for both lists (04 printed it twice word for word), over every row either list rests on
if shared_machine_advice(ok):
    print(f"({shared_machine_advice(ok)} This holds for both lists above.)")
"""),
    md("""
## The roofline
"""),
    code("""
res.plot(kind="roofline")
""", "figure"),
    md("""
The cell below reads each point against the ceilings its own row names (`bw_roof`, `flops_roof`; a cache
level's roof is a dashed slope on the roofline): a point above one (over 100%) is listed with its reason, as the
introduction gives them.
"""),
    code("""
from workbench.roofs.ceilings import row_peak_note
from workbench.roofs.model import RoofKind, resolve_roofs, roofs_of_row

for size, g in ok.groupby("size_label", sort=False):
    print(f"{size}: {cache_text(float(g['bytes'].iloc[0]), last_level_cache_bytes(g['backend'].iloc[0]))}")

roofs = resolve_roofs(ok, res._peaks())


def roof_of(r, unit):
    # the roof a row's percentage is of, as the row names it: its value and, for bandwidth, its memory level
    # (the level the row was scored against, which need not be the roofline's solid DRAM slope)
    value = r["ceiling_gbps" if unit == "GB/s" else "ceiling_gflops"]
    if pd.isna(value):
        return "none"
    rs = roofs_of_row(roofs, r)
    level = rs.level_of(value) if rs is not None and unit == "GB/s" else None
    if level is None and unit == "GB/s":
        return f"{value:.3g} GB/s (level unknown)"
    # the FLOP/s roof is the probe's measured ceiling (the cells above), not the hardware's peak: named so
    return f"{(level.kind if level is not None else RoofKind.FLOPS).short} {value:.3g} {unit}"


rows = []
for _, r in ok.iterrows():
    llc = last_level_cache_bytes(r["backend"])
    bw, fl = r["pct_peak_bw"], r["pct_peak_flops"]
    above_bw, above_fl = bool(pd.notna(bw) and bw > 100), bool(pd.notna(fl) and fl > 100)
    rows.append({"variant": r["variant"], "backend": r["backend"], "size_label": r["size_label"],
                 "pct_peak_bw": bw, "bw_roof": roof_of(r, "GB/s"), "pct_peak_flops": fl,
                 "flops_roof": roof_of(r, "GFLOP/s"), "above": above_bw or above_fl,
                 "cache_resident": above_bw and bool(llc) and r["bytes"] <= llc,
                 "why": row_peak_note(r.to_dict(), llc)})   # worked out from the row's current percentages
roof = pd.DataFrame(rows)
# which roof each percentage is of: pct_peak_bw of the bandwidth roof its row was scored against (named by level),
# pct_peak_flops of the measured GFLOP/s ceiling; the roofline's solid slope is the DRAM one, its dashed ones the caches
bw_roofs = list(dict.fromkeys(roof["bw_roof"]))
cache_level = any(not t.startswith(("DRAM", "none")) for t in bw_roofs)
print(f"pct_peak_bw is of bw_roof ({', '.join(bw_roofs)}), pct_peak_flops of flops_roof "
      f"({', '.join(dict.fromkeys(roof['flops_roof']))}): each row's own ceilings"
      + (" (a cache level's roof is a dashed slope on the roofline above, not its solid DRAM one)" if cache_level
         else ""))
above = roof[roof["above"]]
n, m = len(above), len(roof)
# cells timed but set aside for their status are not plotted: say how many, and which, beside the count
aside = res.df[res.df["median_s"].notna() & (res.df["status"] != "ok")]
aside_text = (f" ({len(aside)} more cell{'s' if len(aside) > 1 else ''} set aside for its status, not plotted: "
              + "; ".join(f"{r['variant']} @ {r['backend']} {r['size_label']}: {r['status']}"
                          for _, r in aside.iterrows()) + ")") if len(aside) else ""


def highest(col, unit):
    # the row at the highest share of its own roof, as that row names it (value and level), in one sentence
    r = ok.loc[pd.to_numeric(ok[col], errors="coerce").idxmax()]
    if unit == "GFLOP/s" and bool(r["library"]):   # the library against its own rate: quoted above, not again
        return (f"was the library's own ({r['variant']} @ {r['backend']} at {r['size_label']}), read against its "
                "own rate in the lines above")
    return (f"was {under(r[col])}% of its {roof_of(r, unit)} roof, by {r['variant']} @ {r['backend']} at "
            f"{r['size_label']}")


# three significant figures, one decimal near 100 (99.6% is under its roof and must not print as 100%)
under = lambda x: f"{x:.1f}" if 99.5 <= x <= 100 else f"{x:.3g}"  # noqa: E731
if n == 0:
    print(f"{under_roofs_text(roof[['pct_peak_bw', 'pct_peak_flops']].max(axis=1, skipna=True).fillna(0), m)}"
          f"{aside_text}. The highest bandwidth share {highest('pct_peak_bw', 'GB/s')}; the highest GFLOP/s share "
          f"{highest('pct_peak_flops', 'GFLOP/s')}.")
else:
    cached = int(above["cache_resident"].sum())
    parts = []
    if cached:
        parts.append(f"{cached} run above the DRAM bandwidth slope because their working set is cache-resident "
                     "(the slope bounds data that streams from memory, not data that stays in cache)")
    if n - cached:   # no cause here: each point's one reason follows, with its own ratio to its roof
        whose = "its" if n - cached == 1 else "each one's"
        parts.append(f"{n - cached} for the reason {whose} line gives below")
    print(f"{n} of {m} plotted points sit above their ceiling{aside_text}: " + "; ".join(parts) + ".")
    for _, r in above.iterrows():
        # one decimal: 100.3% is above its ceiling, and "100" would read as on it
        pcts = ", ".join(f"{r[c]:.1f}% of its {r[of]} ceiling" for c, of in
                         (("pct_peak_bw", "bw_roof"), ("pct_peak_flops", "flops_roof"))
                         if pd.notna(r[c]) and r[c] > 100)
        print(f"  {r['variant']} @ {r['backend']} {r['size_label']} ({pcts}): {r['why']}")
# what was said matches the rows: the points called above are exactly those over 100%, each with its reason
assert (n == 0) == (roof[["pct_peak_bw", "pct_peak_flops"]].max(axis=1, skipna=True).fillna(0) <= 100).all()
assert all(above["why"] != ""), "every point above its ceiling has a reason"
assert all(("fits in" in w) == c for w, c in zip(above["why"], above["cache_resident"]) if "bandwidth" in w)
roof if n else roof.drop(columns=["above", "cache_resident", "why"])   # empty when no point is above
"""),
]

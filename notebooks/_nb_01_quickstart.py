"""Tutorial: Quickstart: what this machine has, one comparison, one plot, one export."""

from _cells import code, md, params

CELLS = [
    md("""
# Quickstart: what this machine has, one comparison, one plot, one export

The workbench compares implementations (*variants*) of one operation (*kernel*) across runtimes
(*backends*). Every measurement is checked against a float64 reference first, timed until its spread is
small or its budget runs out, and stored as one tidy row.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: every backend, with ceilings probed (several minutes)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds (0.5 measures more samples)
REPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.plain_words import what_it_is
from workbench.backends.registry import all_backends
from workbench.core.units import fmt_bytes
from workbench.report.busy_caveat import shared_machine_advice
from workbench.report.plots.lines import quartile_band
from workbench.report.claims import (bandwidth_down_text, cache_place, cache_text, check_claim, disturbance_text,
                                     inner_caches, last_level_cache_bytes, noisy_count_text, mark_busy,
                                     may_state_cause, verdict_claim, verdict_table)
from workbench.report.claim_notes import NoteBlock
from workbench.report.verdict_reading import readings_summary, summary_reading

tutorial.begin(FULL, colwidth=None, small=SMALL,  # figures inline; reasons in full
               leaves_out="the two sizes chosen from this machine's caches (one within half the per-core cache, one "
                          "at twice the last-level cache, streaming from DRAM): it runs 2**12 and 2**16 instead, "
                          "both inside the last-level cache (the cell after the plot prints which cache each fits), "
                          "so nothing below reads a DRAM rate")
"""),
    md("""
## What this machine has

Every backend the workbench knows, available or not. A backend's name is a label (`opencl-0` is the first
OpenCL device the installed drivers list); "what it is" says which runtime, driver and device stand behind
it. An unavailable one says why and how to fix it; nothing here imports a GPU runtime unless its adapter is
probed.
"""),
    code("""
rows = []
for name, b in all_backends().items():
    probe = b.probe()
    rows.append({"backend": name, "what it is": what_it_is(b), "available": probe.available,
                 "device or reason": b.device_info().name if probe.available else probe.reason})
pd.DataFrame(rows).sort_values(["available", "backend"], ascending=[False, True])
"""),
    code("""
print("picked automatically:", workbench.get_backend().name)
# the order the workbench tries backends in when none is named (its priority), not a ranking by speed
print("available, in priority order (not a speed ranking):", workbench.available_backends())
"""),
    md("""
## One comparison

`saxpy` (`out = 1.7 x + y`) reads two arrays and writes one: 12 bytes per element in float32 for 2 FLOPs.
No processor can feed its arithmetic units from memory at that ratio, so the arithmetic never sets the time: the
bytes do, and so does each backend's fixed cost per call (starting a kernel, a copy to a device). **GB/s** (the
kernel's compulsory bytes over the time) is the number to compare here, not proof of what limits a variant: every
variant is credited with the same bytes, whatever extra passes it makes, and a backend whose fixed cost dominates
shows a low GB/s for that reason alone. `benchmark` runs every variant of the kernel on the backends named below —
numpy, numba, torch on the CPU, one OpenCL device and Vulkan, where this machine has them ("opencl" names the device
the workbench prefers by kind, not by a measurement: a GPU, else an accelerator, else a CPU, the lowest-numbered
among equals); Triton's interpreter, a correctness tool that runs a GPU kernel in Python, is left to `FULL = True`
(every device, more sizes).
"""),
    code("""
# from this machine's caches: one size within half the per-core cache, one at twice the last-level cache
sizes = [2**12, 2**16] if SMALL else tutorial.cache_and_dram_sizes("saxpy")
# one device per runtime (the markdown above says which OpenCL device "opencl" names); FULL: every backend
backends = tutorial.backends_for(FULL, ["numpy", "numba", "torch-cpu", "opencl", "vulkan"])
res = workbench.benchmark(kernel="saxpy", backends=backends, sizes=sizes, budget_s=BUDGET_S, store=STORE,
                          progress=False)
res
"""),
    md("""
## One plot

Bandwidth against size. Each point is its cell's headline, the median of its round medians (the figure the
sentences below quote); the shaded band, drawn at each measured size, is the interquartile range of the samples of
the same rounds (the kept rounds: a round set aside because the host ran slow is in neither). Between the two sizes
the band only joins its two ends: nothing was measured there. A hollow point is a noisy cell; an x marks a
disturbed one (the verdict notes below give the rule and name each). The sizes come from this machine's caches
(`tutorial.cache_and_dram_sizes`): one within half the per-core cache, one at twice the last-level cache, so that
its arrays stream from DRAM. An OpenCL backend may be a GPU or, through PoCL, this machine's CPU, and Vulkan may be
a GPU or lavapipe on the CPU; the cell after the plot prints this machine's cache sizes, which cache each size fits,
and what each device is.
"""),
    code("""
res.plot(metric="gbps")
""", "figure"),
    code("""
llc = last_level_cache_bytes("numpy")
per_core = tutorial.machine_caches().per_core
levels = [*inner_caches(llc), ("last-level", llc)] if llc else []
print("caches: " + (", ".join(f"{fmt_bytes(c)} {name}" for name, c in levels) or "sizes unknown"))
for _, g in res.df.groupby("size", sort=True):
    print(f"{g['size_label'].iloc[0]}: {cache_text(float(g['bytes'].max()), llc)}")
if not SMALL and llc:  # what the text above says of the two sizes, checked against this machine
    assert float(res.df["bytes"].max()) > llc, "the larger size must be past the last-level cache"
    assert not per_core or float(res.df["bytes"].min()) <= per_core / 2, "the smaller within half the per-core cache"
for name in res.df["backend"].unique():
    b, info = all_backends()[name], workbench.device_info(name)
    if b.runtime in ("opencl", "wgpu"):
        on_cpu = info.get("kind") == "cpu"
        api = "OpenCL" if b.runtime == "opencl" else "Vulkan"
        # what the CPU driver checks: OpenCL runs the portable kernels; Vulkan runs its own WGSL kernel (the variant
        # named "wgsl", tutorial 02), not the portable ones
        kernels = "a portable kernel is" if api == "OpenCL" else 'its own WGSL kernel (the variant "wgsl") is'
        print(f"{name} runs on {info['name']} ({info.get('kind')}): " + (
            f"{api} on the CPU ({'PoCL' if api == 'OpenCL' else 'lavapipe'}), which checks that {kernels} "
            "correct and says nothing about GPU speed" if on_cpu else f"a real {api} device, so its speed is "
            "that device's"))
# a band the plot draws wide is said, with the band's own figures (the plot's, quartile_band), the ratio the rule
# reads (q3/q1 past WIDE) at three digits, where the point lies in it, and no cause
WIDE = 1.5
ok = res.df[res.df["status"] == "ok"]
for i in ok.index:
    r, band = ok.loc[i], quartile_band(ok.loc[[i]], "gbps")
    if band is None or not band[0][0] > 0:
        continue
    lo, hi = band[0][0], band[1][0]
    if hi / lo > WIDE:
        at = (hi - lo) * 0.05   # within 5% of the band's width of an end: said as at that end
        where = ("at its lower end" if r.gbps - lo <= at else "at its upper end" if hi - r.gbps <= at
                 else "inside it")
        print(f"{r.variant} @ {r.backend} at {r.size_label}: the plot's band runs {lo:.3g}-{hi:.3g} GB/s "
              f"(q3/q1 = {hi / lo:.3g}, past the {WIDE} at which this line is printed), its point "
              f"({r.gbps:.3g} GB/s) {where}: a call's time varied that much at this size")
"""),
    md("""
Each variant against numpy's library call (`baseline="numpy"`; without it, a backend with a library call of
its own, such as torch, is compared with that one): the speed-up, its interval from the rounds, and a
verdict. "faster" or "slower" only where the interval and the noise floor allow it; otherwise the sentence
says the noise could not tell. Past ±50% no interval is printed, only the bound it still guarantees where it lies
wholly on one side ("at least 1.5× faster"), and the comparison "was disturbed". A comparison with a side the plot
draws as an x reads "disturbed" too, with no ratio; where every quartile of one side lies below every quartile of
the other, it says which was faster, "the amount not readable". A sentence gives a slower side's figure as the time
it took ("took 2.0× its time"); the table's speed-up and interval are always numpy's time over the variant's, so
there that figure is inverted (its reciprocal, or "1/" and the sentence's figure where no shorter one inverts to
it). The sentences are chosen by
the verdicts and checked against their numbers (`check_claim`); the numbered notes under the list say why a line is
not settled and what to do, once for every line marked with them.
"""),
    code("""
table = mark_busy(res.speedup(baseline="numpy"), res.df)   # which pairs' rows saw a busy machine
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
# what the sentences add up to at the largest size, from their verdicts only; where it lies against the last-level
# cache is taken from its working set (cache_place), never from its being the larger size
big = table[table["size"] == table["size"].max()]
big_bytes = float(res.df.loc[res.df["size"] == big["size"].max(), "bytes"].max())
# read as the sentences above read them (summary_reading), every pair at that size in one group (readings_summary)
said = {f"{v['variant']} @ {v['backend']}": summary_reading(v) for _, v in big.iterrows()}
print(f"at the largest size ({big['size_label'].iloc[0]}, {cache_place(big_bytes, llc)}), "
      + readings_summary(said, "numpy @ numpy"))
noisy = res.df[res.df["status"] == "ok"]["noisy"].astype(bool)
if noisy.any():   # said, so a reader knows the mark is the machine's, and the verdicts' intervals carry it
    # counted as the figure's legend counts them: its x (disturbed) apart from its hollow points
    print(f"{noisy_count_text(res.df, noisy)}: their rounds spread more than 10%, or other processes took the CPU "
          "while they ran. The verdicts' intervals include that noise.")
if shared_machine_advice(res.df):   # the figure behind any advice above to rerun on an idle machine, and its own
    print(f"({shared_machine_advice(res.df)})")
# cells that ran slower in rounds whose bandwidth probe read low
if bandwidth_down_text(res.df[res.df["status"] == "ok"]):
    print(f"Also: {bandwidth_down_text(res.df[res.df['status'] == 'ok'])}.")
# GB/s counts each kernel's compulsory bytes (read x and y, write out) for every variant alike. That numpy's
# expression moved more (a temporary) is said only where a settled verdict has numpy slower there and its peak
# memory shows the temporary (above the other variants' peak at that size); a cause is never given for a
# disturbed or unsettled pair
ok_rows = res.df[(res.df["status"] == "ok") & (res.df["size"] == big["size"].max())]
peaks = pd.to_numeric(ok_rows.get("peak_mem_bytes", pd.Series(dtype=float)), errors="coerce")
numpy_peak = peaks[ok_rows["variant"] == "numpy"].max()
others_peak = peaks[ok_rows["variant"] != "numpy"].min()
slower_settled = any(may_state_cause(v) and v["speedup"] > 1 for _, v in big.iterrows())
if slower_settled and numpy_peak > 1.25 * others_peak:
    print(f"numpy's expression built a temporary at {big['size_label'].iloc[0]} (peak memory {fmt_bytes(numpy_peak)} "
          f"against {fmt_bytes(others_peak)} for the other variants), moving more bytes than GB/s credits it with: "
          "GB/s counts the compulsory bytes (read x and y, write out) for every variant alike.")
# as the sentences say it: a disturbed comparison shows no interval wider than ±50%, only the bound it quotes, and
# the direction its sentence gives ("slower, disturbed")
verdict_table(table, ["variant", "backend", "size_label", "baseline_variant"])
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

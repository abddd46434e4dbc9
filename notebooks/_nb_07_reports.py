"""Tutorial: Reports: compare runs with confidence, merge machines, export."""

from _cells import code, md, params

CELLS = [
    md("""
# Reports: compare runs with confidence, merge machines, export

A benchmark result is only useful if a colleague can trust and reproduce it. Every row carries its raw
samples and a link to the environment that produced it (CPU, GPU, driver, library versions, threads).
This notebook compares two runs with calibrated verdicts (the noise across rounds and runs decides),
merges runs from another machine, and exports the lot.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: three sizes up to 2**23 (a few minutes)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
REPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code("""
import workbench
from workbench import tutorial

import numba
from workbench.api import Results
import math

import pandas as pd
from workbench.report.claims import busy_text, check_verdict, fmt_floor, interval_text, reading, shown_verdicts
from workbench.judge.verdicts import DISTURBED_FLOOR, is_disturbed
from workbench.judge.compare import compare_runs
from workbench.store import Store

tutorial.begin(FULL)
"""),
    md("""
## Two runs that differ in one thing

Run A uses every core numba has; run B pins numba to one thread. numpy's variant is unchanged, so its
verdict should be *same* (its whole interval within ±5%): whatever moved its time between the runs lies within the noise measured across
rounds and runs. numba's should be *slower* in run B where a second core pays off; at small sizes (where
waking a thread costs about as much as it saves) or on a busy machine (where other processes take the
second core) the noise may be too large to tell — never a confident call the noise does not support. On a
machine busy enough, one thread can even be faster: the second waits for a core more than it helps.
"""),
    code("""
# three sizes: with two variants, six matched cells, enough (MIN_CELLS = 5) for the run-to-run noise to be
# measured from their scatter instead of assumed
sizes = [2**14, 2**18] if SMALL else [2**16, 2**20, 2**23] if FULL else [2**16, 2**18, 2**20]
here = tutorial.available("numpy", "numba")
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
shown = shown_verdicts(cmp)   # past ±50% no interval: the verdict reads "disturbed"
x = lambda v: "" if pd.isna(v) else f"{v:.2f}×"
pd.DataFrame({"variant": shown["variant"], "backend": shown["backend"], "size": shown["size_label"],
              "speed-up (A/B, median of round medians)": shown["speedup"].map(x),
              "interval": [interval_text(lo, hi) for lo, hi in zip(shown["ci_low"], shown["ci_high"])],
              "floor": shown["floor"].map(lambda f: "" if pd.isna(f) else fmt_floor(f)),
              "own rounds": shown["noisy"].map(lambda n: "noisy" if n else "agree"), "verdict": shown["verdict"]})
"""),
    md("""
The speed-up is run A's time over run B's, each run's time being the median of its round medians (each
round's median, then the median across rounds): below 1 means run B is slower. Where a run's rounds fall in
two modes (bimodal), that headline is the majority mode's, while a figure's quartile band pools every sample,
so the two can differ. The interval and `floor` add both runs' spread across rounds to the run-to-run noise,
the scatter of every matched cell's ratio around their common shift (with fewer than five cells it cannot be
measured and ±15% is assumed); a cell whose own rounds agree can still get a wide floor from it. A verdict says "faster" or "slower"
only when the difference exceeds the noise floor (`floor`, from the noise measured across rounds and runs)
and its interval excludes no change; "same" only when the whole interval lies within ±5%, a floor that is itself
small (a "same" under a ±300% floor would only say that the noise hid everything). Anything
else is read as *inconclusive* — the noise or the interval does not settle it — and says what would: more
rounds or a quieter machine. `noisy` marks cells measured while their time varied a lot or the machine was
busy.
"""),
    code("""
# The rules just stated, checked on this table: every verdict follows from its speed-up, interval and floor
# (check_verdict raises ClaimMismatch, naming the numbers, where one does not).
for _, r in cmp.iterrows():
    check_verdict(r)

# The expectations above against what was measured (B = numba on one thread; "slower" = B slower).
expected = {"numpy": {"same"}, "numba": {"slower", "same"} if threads > 1 else {"same"}}
for variant, g in cmp.groupby("variant"):
    said = g.apply(reading, axis=1)
    called = set(said) & {"faster", "slower", "same"}
    counts = ", ".join(f"{'could not tell' if k == 'inconclusive' else k} at {n} of {len(g)} sizes"
                       for k, n in said.value_counts().items())
    if not called:
        widest = g["floor"].max()  # past ±50% a floor is not printed: the comparison was disturbed
        noise = (f"the noise (floors up to {fmt_floor(widest)})" if widest <= DISTURBED_FLOOR
                 else "the noise (the comparisons were disturbed)")
        quiet = not g["noisy"].astype(bool).any()
        if quiet:   # its own rounds agreed: the width comes from the run-to-run part, said with its basis
            cells = int(cmp["speedup"].notna().sum())
            basis = (f"measured from the scatter of {cells} cells' ratios, numba's among them" if cells >= 5 else
                     f"assumed: {cells} cells are too few to measure it")
            noise += (f", although its own rounds agreed: the run-to-run noise (one sigma about "
                      f"±{math.expm1(cmp.attrs['run_noise']):.0%} per cell, {basis}) sets that width")
        outcome = (f"{noise} was too large to tell at every size"
                   + (f" ({busy_text(df)})" if busy_text(df) else "")
                   + ", so this run cannot check the text's expectation; more rounds or a quieter machine would")
    elif called <= expected.get(variant, called):
        outcome = "as the text above expects" + (" where the noise let us tell" if len(called) < len(said) else "")
    elif variant == "numba" and threads > 1 and called == {"faster"} and busy_text(df):
        outcome = (f"one thread was faster, the busy case the text above allows for ({busy_text(df)}): "
                   "a quiet machine is where a second core can show what it is worth")
    else:
        outcome = ("not what the text above expects; the floors printed above say how much noise the machine added"
                   + (f" ({busy_text(df)})" if busy_text(df) else ""))
    assert ("as the text above expects" in outcome) == (bool(called) and called <= expected.get(variant, called))
    assert ("one thread was faster" in outcome) == (variant == "numba" and threads > 1 and called == {"faster"}
                                                 and bool(busy_text(df)))
    print(f"{variant}: run B against run A: {counts}; {outcome}")
    if variant == "numba" and "slower" in set(said):
        slow = g[said == "slower"]
        disturbed = slow["floor"].map(lambda f: is_disturbed(float(f)))
        if (~disturbed).any():   # a settled, undisturbed "slower": the cause the text expects may be named
            print(f"  one thread was slower beyond the noise at {', '.join(slow.loc[~disturbed, 'size_label'])}: "
                  "the second core paid off there")
        if disturbed.any():      # slower but disturbed: only the bound is known, and no cause is stated
            print(f"  one thread was slower at {', '.join(slow.loc[disturbed, 'size_label'])}, but that comparison "
                  "was disturbed: by how much, and why, this run cannot say; rerun it on a quieter machine")
"""),
    code("""
names = {run_a.run_id: f"run A, numba {threads} threads", run_b.run_id: "run B, numba 1 thread"}
Results(df, [run_a.run_id, run_b.run_id], store).plot(metric="time", run_names=names)
""", "figure"),
    md("""
## Merge runs from another machine

Each machine exports its runs to one JSON file (`workbench export`, `Store.export`, or the dashboard's
JSON button); another store imports it (`workbench import`). Here the "other machine" is simulated: its
store is a fresh file that receives our export, as a colleague's store would, and then records a run
of its own. Because that run is measured here, its `env_id` (the fingerprint of machine and software) is
this machine's; a run imported from a real colleague keeps theirs, and comparisons then match cells per
machine. Importing is idempotent and only parses JSON — nothing from the file is executed.
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

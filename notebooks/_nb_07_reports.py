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
SMALL = False
BUDGET_S = 0.5
REPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code("""
%matplotlib inline
import pandas as pd
import workbench
from workbench.backends.registry import all_backends

import numba
from workbench.api import Results
from workbench.stats_compare import compare_runs
from workbench.store import Store

pd.set_option("display.max_colwidth", 80)
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

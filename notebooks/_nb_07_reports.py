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
import re

import pandas as pd
import numpy as np
from workbench.report.claims import json_list
from workbench.report.claims import (busy_share, busy_text, check_claim,
                                     check_printed_intervals, check_verdict, disturbance_text, fmt_floor,
                                     interval_text, mark_busy,
                                     may_state_cause, reading, shown_verdicts, sigma_pct,
                                     same_band, table_ratio, verdict_claim)
from workbench.report.claim_notes import Claim, NoteBlock
from workbench.report.claims import PHRASES
from workbench.judge.verdicts import K_BETWEEN, MIN_CELLS, NOISY_SPREAD, is_disturbed, pct
from workbench.judge.disturbed import rounds_could
from workbench.report.runs_needed import practical, runs_needed_text, runs_rerun_hint
from workbench.report.claims_cause import scatter_text
from workbench.report.noise_parts import noise_parts_text, own_part, rerun_advice, summary_advice
from workbench.report.ratio_text import inverted_bounds
from workbench.report.runs_cause import rest_cause
from workbench.report.claims_rows import quartiles_wide
from workbench.report.beyond_noise import direction_said
from workbench.judge.disturbed import CELL_RULE
from workbench.judge.compare import compare_runs
from workbench.judge.between_runs import RUN_NOISE_MIN
from workbench.core.units import fmt_bytes
from workbench.store import Store

tutorial.begin(FULL)
"""),
    md("""
## Two runs that differ in one thing

Run A uses every core numba has; run B pins numba to one thread. numpy's variant is unchanged, so its
verdict should be *same* (its whole interval within ±5%): whatever moved its time between the runs lies
within the noise measured across rounds and runs. numba's should be *slower* in run B where a second
core pays off, at the larger sizes; at the smallest, waking a second thread can cost more than it saves,
so one thread may be *faster* there — but only below the sizes where it is slower, never above them. On a
busy machine (where other processes take the second core) the noise may be too large to tell — never a
confident call the noise does not support — and one thread can even be faster at every size: the second
waits for a core more than it helps.
"""),
    code("""
# five sizes: numpy's five cells, whose code and threads stay the same, are meant to be enough (MIN_CELLS = 5) for
# the run-to-run noise to be measured from their scatter instead of assumed (a cell that failed, or whose rows
# record other thread pools, is not counted: the output below says how many were); numba's cells, whose rows
# record other thread pools in run B, are the change under test and stay out of that noise (compare_runs reads
# the rows)
sizes = ([2**12, 2**13, 2**14, 2**16, 2**18] if SMALL else [2**16, 2**18, 2**20, 2**22, 2**23] if FULL
         else [2**14, 2**16, 2**17, 2**18, 2**20])
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
cmp = mark_busy(compare_runs(df, run_a.run_id, run_b.run_id), df)   # which cells' rows saw a busy machine
cmp["run_noise"] = cmp.attrs["run_noise"]   # a disturbed sentence names the runs' scatter against the cells' rounds
# what the rows recorded of the two runs besides the code: run B's one numba thread is among them
print("what differs between the runs besides the code, as compare_runs reads their rows:")
print("\\n".join(f"  - {c}" for c in cmp.attrs.get("conditions", [])) or "  (nothing beyond the threads below)")
# run B's one numba thread, as its rows recorded it (each row stores the thread settings it ran under)
recorded = df[df["backend"] == "numba"].groupby("run_id")["threads"].agg(lambda t: "; ".join(sorted(set(t.dropna()))))
pools_said = any(c.startswith("the thread pools differed") for c in cmp.attrs.get("conditions", []))
for rid, label in ((run_a.run_id, "run A"), (run_b.run_id, "run B")):
    if not pools_said:   # the conditions above already quote both runs' pools: not said twice
        print(f"  {label}'s numba rows ran with: {recorded.get(rid) or 'threads not recorded'}")
if "numba 1," not in (recorded.get(run_b.run_id) or ""):   # said, not hidden: the premise of the comparison
    print("  run B's rows do not record one numba thread (numba's thread count is per Python thread, and the rows "
          "read it where they were measured): the verdicts below may compare two runs on the same threads")
# what the run-to-run noise rests on, as it happened: measured from enough matched cells, or assumed
noise_on, noise_off = cmp.attrs["noise_cells"]
# at its floor (RUN_NOISE_MIN) the noise is the least a comparison between runs assumes, not what was measured
at_least = float(cmp.attrs["run_noise"]) <= RUN_NOISE_MIN + 1e-12
noise = ("at least " if at_least else "") + sigma_pct(float(cmp.attrs["run_noise"]))
print(f"the run-to-run noise: {noise} (one sigma), "
      + (f"the minimum a comparison between runs assumes: the {noise_on} matched cells scatter less"
         if at_least and noise_on >= MIN_CELLS else
         f"measured from the scatter of {noise_on} matched cells" if noise_on >= MIN_CELLS else
         f"assumed: {noise_on} matched cells are fewer than the {MIN_CELLS} it takes to measure it")
      + (f"; {noise_off} cells whose rows record other thread pools are left out of it" if noise_off else ""))


def noisy_mark(v, run_sigma: float) -> str:
    # a comparison is noisy where either cell carries the noisy mark, or where its own rounds' part of the noise (the
    # figure its line prints as "its own rounds (±x%)") passes the 10% a cell's rounds are held to: the column and
    # the line cannot disagree, and the column says which of the two it is
    noise = float(v.get("noise")) if pd.notna(v.get("noise")) else float("nan")
    own = math.expm1(own_part(noise, run_sigma)) if math.isfinite(noise) else 0.0
    if own > NOISY_SPREAD:
        # one decimal within ±50%, so a figure near the 10% threshold never prints as "±10%" on either side of it
        return f"yes: its own rounds {f'±{own:.1%}' if own <= 0.5 else scatter_text(own_part(noise, run_sigma))}"
    return "yes: a cell's mark" if bool(v.get("noisy")) else "no"


shown = shown_verdicts(cmp)   # past ±50% no interval: the verdict reads "disturbed"
# each ratio at the precision its sentence prints (table_ratio), so the table and the sentence show one figure
x = [table_ratio(v, lo, hi) if pd.notna(v) else ""
     for v, lo, hi in zip(shown["speedup"], cmp["ci_low"], cmp["ci_high"])]
pd.DataFrame({"variant": shown["variant"], "backend": shown["backend"], "size": shown["size_label"],
              "speed-up (A/B, median of round medians)": x,
              # a "same" row's interval at the band's edges (claims.same_band), as its sentence prints it
              "interval": [interval_text(lo, hi, same_band() if vd == "same" else ())
                           for lo, hi, vd in zip(shown["ci_low"], shown["ci_high"], shown["verdict"])],
              "floor": shown["floor"].map(lambda f: "" if pd.isna(f) else fmt_floor(f)),
              # one rule for the mark and the noise the lines print (noisy_mark)
              "noisy": [noisy_mark(v, float(cmp.attrs["run_noise"])) for v in shown.to_dict("records")],
              "verdict": shown["verdict"]})
"""),
    md("""
The speed-up is run A's time over run B's, each run's time being the median of its round medians (each round's
median, then the median across rounds): below 1 means run B is slower. A ratio below 1 prints with the digits
whose inverse is the figure its sentence says ("run B measured 1.014× slower" beside 0.986×); where no short
decimal inverts to it, the table prints that figure as a fraction, "1/1.13×". Where a run's rounds fall in two modes
(bimodal), that headline is the majority mode's, while a figure's quartile band pools every sample, so the two
can differ. The interval and `floor` add both runs' spread across rounds to the run-to-run noise, the scatter
around their common shift of the ratios of the matched cells whose rows record the same thread pools in both
runs — numpy's here: numba's one thread is the change under test, not noise (with fewer than five cells it
cannot be measured and 0.15 is assumed, as a log sigma: about ±16%); a cell whose own rounds agree can still get
a wide floor from it. A verdict says "faster" or "slower" only when the difference exceeds the noise floor
(`floor`, from the noise measured across rounds and runs) and its interval excludes no change; "same" only when
the whole interval lies within ±5%, a floor that is itself small (a "same" under a ±300% floor would only say
that the noise hid everything). Anything else is read as *inconclusive* — the noise or the interval does not
settle it — and says what would: between two runs, more runs of each side, as many as the run-to-run scatter
needs (`workbench compare A1,A2,... B1,B2,...`; more rounds shrink a run's own noise, not the noise between runs),
or, where that is more than 20 a side, quieter runs; and a quieter machine where the rows saw a busy one.
*disturbed* (no speed-up, interval or floor printed) marks a comparison that cannot inform: either its interval
reaches ±50% or more, or one of its two cells is itself disturbed — its quartiles lie half its median or more
apart, so its median is no value to read (the figure draws such a cell as an x at each quartile). Its line says
which, by what, and how to rerun.
`noisy` reads "yes: its own rounds ±x%" where the comparison's own rounds, the figure its line prints, pass
10% (one sigma), the threshold a cell's rounds are held to; past ±50% that figure reads as a factor, "8.5× either
way" (one sigma: its rounds scatter the ratio by a factor of 8.5 up or down).
It reads "yes: a cell's mark" where either cell carries the noisy mark: its round medians scatter by more than
10% (a robust spread, rounds set aside while the host ran slow left out), or fall in two groups, or a round felt
a dip of the memory bandwidth, or other processes used more than 25% of the CPU while it ran.
"""),
    code("""
# The rules just stated, checked on this table: every verdict follows from its speed-up, interval and floor
# (check_verdict raises ClaimMismatch, naming the numbers, where one does not).
for _, r in cmp.iterrows():
    check_verdict(r)

# The expectations above against what was measured (B = numba on one thread; "slower" = B slower). Each cell's
# sentence comes from its verdict (verdict_sentence, checked by check_claim); where the verdict does not settle
# the cell, its interval still bounds run B's time, and that bound is said (undisturbed intervals only).
base, other = f"run A ({threads} threads)", "run B (1 thread)"
expected = {"numpy": {"same"}, "numba": {"slower", "same", "faster"} if threads > 1 else {"same"}}


def b_over_a(lo: float, hi: float) -> tuple[str, str]:
    # an interval of A's time over B's (lo-hi) turned to B's time over A's, at one precision, each end rounded
    # outward from the worse of the true end and the inverse of the table's printed end (ratio_text.inverted_bounds):
    # a bound that follows from the table's "0.9×" as a reader inverts it (1.11), not only from the unrounded 0.93
    return inverted_bounds(lo, hi)


def interval_bound(v, text: str, head: str) -> str | None:
    # what an unsettled comparison's interval still bounds (run B's time over run A's): None where it bounds
    # nothing (a disturbed interval, or a comparison resting on a disturbed cell, whose line says no ratio is read
    # from it: 07 printed "rests on a disturbed cell; by its interval run B took 0.061x-0.068x"); "" where the line
    # already prints that interval; else the bound, at the interval's printed ends turned to B over A
    lo, hi = float(v["ci_low"]), float(v["ci_high"])
    if (reading(v) not in ("inconclusive", "same") or is_disturbed(float(v["floor"])) or not 0 < lo <= hi
            or PHRASES["disturbed cell"] in text):
        return None
    if "interval" in head:   # the line prints its interval already (as "(99% interval ...)" or "interval (...)")
        return ""
    b_lo, b_hi = b_over_a(lo, hi)
    return f"; by its interval run B took {b_lo}-{b_hi} run A's time"


def as_expected(variant: str, g: pd.DataFrame, said: pd.Series) -> bool:
    # the text's expectation: only the calls it allows, and numba's one thread faster only at sizes below
    # every size where it is slower (waking a second thread costs more than it saves only at small sizes)
    called = set(said) & {"faster", "slower", "same"}
    if not called or not called <= expected.get(variant, called):
        return False
    fast, slow = (g.loc[said == k, "size"].astype(float) for k in ("faster", "slower"))
    return not len(fast) or (len(slow) > 0 and fast.max() < slow.min())

run_sigma = float(cmp.attrs["run_noise"])
cells, left_out = cmp.attrs["noise_cells"]   # the cells the noise was measured on; those whose settings changed
# at RUN_NOISE_MIN the noise is the least a comparison between runs assumes, said so: a floor, not a measurement
run_basis = ((f"the minimum a comparison between runs assumes: the {cells} matched cells scatter less"
              if cells >= MIN_CELLS and run_sigma <= RUN_NOISE_MIN + 1e-12 else
               f"measured from the scatter of {cells} matched cells" if cells >= MIN_CELLS else
              f"assumed: {cells} matched cells are too few to measure it")
             + (f"; the {left_out} cells whose rows record other thread pools are left out of it" if left_out else ""))
busy = busy_text(df)



def cells_of(v):
    # the pair's two cells (one per run) at its size, for the disturbed-cell rule
    return df[(df["variant"] == v["variant"]) & (df["backend"] == v["backend"]) & (df["size_label"] == v["size_label"])]


def counted(g):
    # each size's label (report.beyond_noise.direction_said): a direction or "same" resting on a disturbed
    # comparison or cell (one the figure crosses out) is counted apart, never with the settled ones; said: what the
    # checks below read
    labels = pd.Series([direction_said(v, cells_of(v).to_dict("records")) for v in g.to_dict("records")], index=g.index)
    head, qualifier = labels.str.partition(", ")[0], labels.str.partition(", ")[2]
    # a direction qualified as disturbed, or as resting on too few rounds at speed (FEW_ROUNDS), is not settled
    apart = (qualifier != "") & head.isin(["faster", "slower", "same"])
    said = head.where(~apart & head.isin(["faster", "slower", "same"]), "inconclusive")
    counts = ", ".join(f"{'could not tell' if k == 'inconclusive' else k} at {n} of {len(g)} sizes"
                       for k, n in said[~apart].value_counts().items())
    more = ", ".join(f"{k} at {', '.join(g.loc[apart & (head == k), 'size_label'])}"
                     for k in dict.fromkeys(head[apart]))
    on = " or ".join(dict.fromkeys("a disturbed comparison or cell" if q == "disturbed" else q
                                   for q in qualifier[apart]))
    return said, counts + (f" ({int(apart.sum())} more {'rests' if apart.sum() == 1 else 'rest'} on {on}, "
                           f"not counted as settled: {more})" if apart.any() else "")


def named_cells(v, sentence: str) -> str:
    # a sentence that says "one of its cells reads disturbed" of a pair whose two cells are both numba @ numba names
    # the run whose cell it is, in that place
    wide = [f"run {'A' if c['run_id'] == run_a.run_id else 'B'}'s" for c in cells_of(v).to_dict("records")
            if quartiles_wide(c)]
    if not wide:
        return sentence
    if "rests on a disturbed cell" in sentence:   # the head alone (its reasons, with the rule, are notes)
        return sentence.replace("rests on a disturbed cell", f"rests on a disturbed cell ({' and '.join(wide)} "
                                f"{'cells' if len(wide) > 1 else 'cell'})", 1)
    if len(wide) == 1:
        return sentence.replace("one of its cells reads disturbed", f"{wide[0]} cell reads disturbed", 1)
    return sentence.replace("2 of its cells read disturbed", "both runs' cells read disturbed", 1)


def merged(block):
    # lines that say the same thing at several sizes, said once with their sizes (07 printed one sentence five times,
    # "the comparison was disturbed, as it rests on a disturbed cell (run A's cell) [1][2][3][4]")
    heads = {}
    rendered = block.render()
    for (label, _, _), line in zip(block.lines, rendered, strict=False):
        heads.setdefault(line.removeprefix(f"{label}: "), []).append(label)
    said = [f"{', '.join(ls[:-1])} and {ls[-1]}: {rest}" if len(ls) > 1 else f"{ls[0]}: {rest}"
            for rest, ls in heads.items()]
    return said + rendered[len(block.lines):]


def cell_note(v, sentence):
    # a comparison one of whose cells is disturbed says so in its own sentence, naming which run's cell
    wide = [f"run {'A' if c['run_id'] == run_a.run_id else 'B'}'s" for c in cells_of(v).to_dict("records")
            if quartiles_wide(c)]
    if CELL_RULE in sentence:   # the rule already said: named_cells names the run in its place
        return ""
    return (f"; {' and '.join(wide)} {v['variant']} cell {'are' if len(wide) > 1 else 'is'} disturbed ({CELL_RULE}):"
            f" {'their medians are' if len(wide) > 1 else 'its median is'} no value to read" if wide else "")


for variant, g in cmp.groupby("variant"):
    said, counts = counted(g)
    called = set(said) & {"faster", "slower", "same"}
    block, lines, bounded = NoteBlock(), [], False   # the per-size lines (reasons said once, as notes); the summary
    # numpy's threads did not change between the runs (only numba's did): its sentences name the runs alone
    names = (base, other) if variant == "numba" else ("run A", "run B")
    for _, v in g.iterrows():
        hint = rerun_advice(float(v["noise"]) if pd.notna(v["noise"]) else float("nan"), run_sigma, bool(busy))
        claim = verdict_claim(v, *names, disturbance_text(df), rerun=hint)
        check_claim(v, claim.text())
        check_claim(v, claim.head)   # the line prints the head; its reasons are the block's notes
        bound = interval_bound(v, claim.text(), claim.head)
        bounded = bounded or bound is not None
        sentence = claim.head + (bound or "")
        block.add(v["size_label"], Claim(f"{named_cells(v, sentence)}{cell_note(v, claim.text())}", claim.reasons))
    if not called:
        # where the width comes from, over the same cells the lines above print (report.noise_parts): the
        # undisturbed cells' own rounds and floors, and the disturbed ones apart, so the noise said here is the
        # noise of the lines above
        noise = g.loc[~g["floor"].map(lambda f: is_disturbed(float(f))), "noise"].astype(float).dropna()
        # the runs' noise and what it rests on were printed under the two runs above: named, not repeated
        width = noise_parts_text(g.to_dict("records"), run_sigma, "printed under the two runs above")
        # every cell disturbed: say what the noise was measured from, with each variant's median move (A over B),
        # so a reader can see whether the change under test is itself in the scatter
        moves = "; ".join(f"{name}'s cells {float(np.exp(np.log(m['speedup'].astype(float)).median())):.2g}×"
                          for name, m in cmp.dropna(subset=["speedup"]).groupby("variant"))
        measured = cells >= MIN_CELLS
        # every comparison disturbed by its cells' own rounds (the lines say so): their noise split, said as the
        # lines say it; disturbed by the runs' scatter: what that scatter was measured from. The runs' scatter is
        # named only where no line's own rounds are wider than it (own_wide)
        own_wide = any(own_part(n, run_sigma) > run_sigma for n in g["noise"].astype(float) if math.isfinite(n))
        why = width if len(noise) else f"Every comparison was disturbed. {width}" if own_wide else (
            f"Every comparison was disturbed: the run-to-run noise they share is ±{pct(math.expm1(run_sigma))} "
            f"({run_basis}{' around their common shift' if measured else ''}), and at the median the runs moved "
            f"them apart ({moves}, A's time over B's)"
            + ((": an assumed noise that wide puts every floor past ±50%, whatever the machine did: more matched "
                "cells (more sizes) let it be measured") if not measured else
               ": the cells that noise is measured from moved apart by more than their rounds explain, so none of "
               "the cells can be told from it here" if left_out else
               ": what the runs changed is itself part of the scatter that noise is measured from, so none of the "
               "cells can be told from it here") + ". The figure below shows each run's own medians.")
        # what the intervals still say: at each undisturbed size whose interval rules out run B (one thread)
        # taking more than 1.1x run A's time, the second core bought numba at most that much there
        ok = g[~g["floor"].map(lambda f: is_disturbed(float(f)))]
        if "cells_disturbed" in ok:   # nor from a comparison resting on a disturbed cell (no ratio is read from it)
            ok = ok[pd.to_numeric(ok["cells_disturbed"], errors="coerce").fillna(0) == 0]
        small = ok[1 / ok["ci_low"].astype(float) <= 1.1] if variant == "numba" and threads > 1 else ok.iloc[0:0]
        if len(small):
            at = "; ".join(f"at {r['size_label']} more than {b_over_a(float(r['ci_low']), float(r['ci_high']))[1]}"
                           for _, r in small.iterrows())
            lines.append(f"  the intervals rule out one thread taking longer than {threads} threads by these factors "
                         f"({at}): there the extra cores bought numba at most that much, far from the {threads}× "
                         f"that {threads} threads could give at best")
        advice = summary_advice(list(g["noise"].astype(float)), run_sigma, bool(busy))
        # the busy machine in a note under the lines already: not said again on this line
        noted = "machine was busy" in "\\n".join(block.render())
        lines.append("  No size settled" + (f" ({busy})" if busy and not noted else "") + f". {why}"
                     + (" The text's expectation is checked only as far as the intervals above bound it."
                        if bounded else "" if variant == "numba" and threads > 1
                        else " So this run cannot check the text's expectation.")
                     # the advice the lines above give, by their rule (summary_advice): said here only where no line
                     # carried it (its notes, under the block, say it once)
                     + ("" if any(r for _, _, r in block.lines) else f" {advice[0].upper()}{advice[1:]}"
                        + ("; on a quieter machine." if busy and "otherwise idle" not in advice else ".")))
    elif as_expected(variant, g, said):
        lines.append("  as the text above expects"
                     + (" where the noise let us tell" if (said == "inconclusive").any() else ""))
    elif variant == "numba" and threads > 1 and called == {"faster"} and busy:
        lines.append(f"  one thread was faster, the busy case the text above allows for: {busy}. A quiet machine is "
                     "where a second core can show what it is worth.")
    else:   # a settled call the text did not expect: for numpy, whose code and threads did not change, it
        # measures the machine between the runs; for numba it may be either
        lines.append("  not what the text above expects: "
                     + ("numpy's code and threads were the same in both runs, so a settled difference measures the "
                        "machine between the runs, not the code" if variant == "numpy" else
                        "one thread faster at a size above one where it is slower, or at every size on a quiet "
                        "machine: the thread count and the machine between the runs both differ, and this run "
                        "cannot tell which made the difference") + (f" ({busy})" if busy else ""))
    if not called and variant == "numba" and threads > 1 and not bounded:
        # the experiment's own question left open, said plainly once: why, and what setting would answer it
        lines.append(f"  So this run cannot show what numba's second thread buys: none of its {len(g)} comparisons "
                     "settled" + (f", while other processes used up to {busy_share(df):.0%} of the CPU and a second "
                                  "thread waits for a core" if busy else "")
                     + ". A run " + ("with SMALL = False (larger sizes, where a second core pays, and more time per "
                                     "cell) " if SMALL else "")
                     + "on an otherwise idle machine is what can show it.")
    text = "\\n".join([f"{variant}: run B against run A: {counts}"] + [f"  {x}" for x in merged(block)] + lines)
    assert ("as the text above expects" in text) == as_expected(variant, g, said)
    assert ("one thread was faster" in text) == (variant == "numba" and threads > 1 and called == {"faster"}
                                                 and bool(busy))
    check_printed_intervals(text)
    print(text)
    settled = g[[may_state_cause(v) for v in g.to_dict("records")]]
    if variant == "numba" and threads > 1 and (said[settled.index] == "slower").any():
        # a settled, undisturbed "slower": the cause the text expects may be named
        # a second core gives at most `threads`x: where run B took more than that even at its interval's low end,
        # something besides the thread count made part of the difference (named only where the numbers agree)
        slow = settled[said[settled.index] == "slower"]
        low_end, high_end = 1 / slow["ci_high"].astype(float), 1 / slow["ci_low"].astype(float)
        within = slow[high_end <= threads]                        # the whole interval at or under `threads`x
        reaching = slow[(low_end <= threads) & (high_end > threads)]   # consistent with it, reaching past it
        beyond = slow[low_end > threads]
        if len(within):
            print(f"  one thread was slower beyond the noise at {', '.join(within['size_label'])}, by no more than "
                  f"{threads} threads can give over one (every interval at or under {threads}×): the extra cores "
                  "paid off there")
        if len(reaching):
            print(f"  at {', '.join(reaching['size_label'])} one thread was slower beyond the noise, by an amount "
                  f"consistent with what {threads} threads can give (the interval's low end at or under {threads}×, "
                  "its high end past it): the extra cores can account for it, and the rows cannot say whether more "
                  "than the thread count differed")
        for _, r in beyond.iterrows():
            # the machine between the runs is named only where numpy, unchanged, moved the same way at this size and
            # neither numba cell reads disturbed (rest_cause)
            same = cmp[(cmp["variant"] == "numpy") & (cmp["size_label"] == r["size_label"])]
            cells = df[(df["backend"] == "numba") & (df["size_label"] == r["size_label"])]
            wide = [f"{label}'s numba cell" for rid, label in ((run_a.run_id, "run A"), (run_b.run_id, "run B"))
                    if any(quartiles_wide(c) for c in cells[cells["run_id"] == rid].to_dict("records"))]
            rest = rest_cause(same.iloc[0].to_dict() if len(same) else None, "numpy", wide)
            print(f"  at {r['size_label']} run B took more than {threads}× run A's time even at its interval's low "
                  f"end, more than {threads} threads can give over one: the thread count alone does not explain "
                  f"it; {rest}")
    if variant == "numba" and threads > 1 and as_expected(variant, g, said) and (said[settled.index] == "faster").any():
        fast = settled.loc[said[settled.index] == "faster", "size_label"]
        why = ("either waking the second thread cost more than the second core saved, or, on this busy machine, "
               "the second thread waited for a core: these rows cannot tell which" if busy else
               "there, on a machine otherwise idle, waking the second thread cost more than the second core saved")
        print(f"  one thread was faster beyond the noise at {', '.join(fast)}, below every size where it was "
              f"slower: {why}")
"""),
    code("""
names = {run_a.run_id: f"run A, numba {threads} threads", run_b.run_id: "run B, numba 1 thread"}
Results(df, [run_a.run_id, run_b.run_id], store).plot(metric="time", run_names=names)
""", "figure"),
    md("""
## Merge runs from another machine

Each machine exports its runs to one JSON file (`workbench export`, `Store.export`, or the dashboard's
JSON button); another store imports it (`workbench import`). Importing is idempotent and only parses JSON —
nothing from the file is executed. Below, a fresh store (a colleague's) imports our run A, and then a run
measured on another machine: the quick run of one of our GPU hosts, exported on that host and kept in this
repository (`docs/gpu-runs/`). Its `env_id` (the fingerprint of machine and software) is that host's, and
its rows keep that host's CPU, cores and caches.
"""),
    code("""
from pathlib import Path

import json

export = store.export([run_a.run_id], Path(REPORT_DIR) / "machine-a.json")
colleague = Path(REPORT_DIR) / "colleague.sqlite"
colleague.unlink(missing_ok=True)
merged = Store(colleague)
print("imported:", merged.import_file(export))
print("again:   ", merged.import_file(export))
# a run exported on another machine (a source checkout ships it; an installed package does not)
remote_file = Path(workbench.__file__).resolve().parents[1] / "docs/gpu-runs/2026-11-26-h100/quick-run1.json"
remote_id = None
if remote_file.exists():
    print("imported:", merged.import_file(remote_file))
    remote_id = json.loads(remote_file.read_text())["runs"][0]["run_id"]
else:
    print(f"{remote_file} is not in this installation: the cross-machine comparison below is skipped")

def machine(env_id):
    host = (merged.environment(env_id) or {}).get("host") or {}
    llc = host.get("last_level_cache_bytes")
    return {"env_id": env_id, "CPU": host.get("cpu_model"), "cores": host.get("physical_cores"),
            "last-level cache": fmt_bytes(llc) if llc else "unknown"}

runs = merged.runs()
pd.DataFrame([{"run_id": r.run_id, "name": r.name, **machine(r.env_id)} for r in runs.itertuples()])
"""),
    md("""
Runs from two machines are compared cell by cell: cells match on kernel, variant, backend, dtype,
parameters, mode and cache, so the sizes here are the other machine's own. Below this machine measures
numpy's saxpy, gelu_tanh and sum at the sizes the other host measured them (six cells: enough for the
run-to-run noise to be measured from their scatter), and `compare_runs` judges each pair; its conditions
say what besides the code differs between the two runs, and every verdict compares the machines too.
"""),
    code("""
def blamed_busy(scatter, busy_seen, spread_here):
    # the busy machine the sentences blame, and whose idle rerun they advise: only where this machine's rounds varied
    # more than the machines' scatter, and where that scatter alone, at the K_BETWEEN sigmas an interval spans, leaves
    # an interval that can inform (within ±50%): advice must be able to settle it (a scatter whose K_BETWEEN sigmas
    # pass ±50% stays that wide however quiet this machine is, so no idle rerun narrows it)
    alone_wide = is_disturbed(math.expm1(K_BETWEEN * scatter))
    return busy_seen if busy_seen and spread_here > scatter and not alone_wide else ""


def scatter_sentences(n: int, scatter: float, here_busy: str, busy_seen: str, spread_here: float,
                      share: float) -> list[str]:
    # what sets the width of every comparison between the machines, one thing a sentence, said once for the lines
    # below (each line then names it in a few words)
    alone_wide = is_disturbed(math.expm1(K_BETWEEN * scatter))
    out = [f"The {n} cells' ratios between the machines scatter by {sigma_pct(scatter)} (one sigma) around their "
           "common ratio.", "That scatter sets how wide each comparison below is."]
    if alone_wide:
        out.append(f"At the {K_BETWEEN:g} sigmas an interval spans, it alone passes ±50%, so no interval below can "
                   "inform.")
    if here_busy:
        out.append(f"This machine's rounds varied by up to {spread_here:.0%}, more than that scatter: {here_busy}, "
                   "which widens this machine's side.")
    elif busy_seen and spread_here <= scatter:
        out.append(f"{busy_seen[0].upper()}{busy_seen[1:]}.")
        # a range (fastest to slowest round) set against a one-sigma scatter: said as such, and why it still holds
        # (a range is wider than the one-sigma scatter of the same rounds)
        out.append(f"This machine's rounds agreed within {spread_here:.0%} from the fastest to the slowest round of "
                   f"any cell; a range that narrow scatters by less still, one sigma, than the ratios' "
                   f"{sigma_pct(scatter)}, so the busy CPU is not what makes the intervals wide.")
    else:
        out.append(f"{busy_seen[0].upper()}{busy_seen[1:]}." if busy_seen else
                   f"No busy machine: other processes took at most {share:.0%} of the CPU here.")
    return out


if remote_id is not None:
    theirs = merged.results([remote_id])
    theirs = theirs[(theirs["backend"] == "numpy") & theirs["kernel"].isin(["saxpy", "gelu_tanh", "sum"])
                    & (theirs["status"] == "ok")]
    ours = [workbench.benchmark(kernel=k, variants=sorted(set(g["variant"])), backends=["numpy"],
                                sizes=[json.loads(p) for p in g["params"]], budget_s=BUDGET_S, store=merged,
                                progress=False, name=f"this machine: {k}")
            for k, g in theirs.groupby("kernel")]
    here_id = "this machine"   # the three runs measured here, taken as one side of the comparison
    both = pd.concat([merged.results([remote_id]),
                      merged.results([r.run_id for r in ours]).assign(run_id=here_id)], ignore_index=True)
    across = compare_runs(both, remote_id, here_id)
    judged = across[across["verdict"].notna()]
    print(f"{len(judged)} cells matched across the two machines. Besides the code, the two runs differ in:")
    print("\\n".join(f"  - {c}" for c in across.attrs["conditions"]))
    # two machines: the width comes from their kernels' ratios scattering around one common ratio (each kernel
    # favours the machines differently), not from a busy machine; an idle rerun would not narrow it
    mine = both[both["run_id"] == here_id]
    scatter = float(across.attrs["run_noise"])
    # the busy CPU is blamed only where this machine's own rounds varied more than the machines' scatter: where
    # they agreed closer than it, the scatter alone gives the width, busy or not
    spreads = [max(r) / min(r) - 1 for r in (json_list(t) for t in mine["round_medians_s"].dropna())
               if len(r) > 1 and min(r) > 0]
    spread_here = max(spreads, default=0.0)
    busy_seen = busy_text(mine)
    scatter_wide = is_disturbed(math.expm1(K_BETWEEN * scatter))
    here_busy = blamed_busy(scatter, busy_seen, spread_here)
    print(" ".join(scatter_sentences(len(judged), scatter, here_busy, busy_seen, spread_here, busy_share(mine) or 0)))
    # the numbers each sentence rests on, shown: past ±50% no estimate or interval, only the bound kept
    # between machines a wide interval is their scatter, not a disturbance, unless this side's rows saw a busy machine
    shown_x = shown_verdicts(judged, wide=not here_busy)
    bounds = [interval_text(lo, hi) for lo, hi in zip(shown_x["ci_low"], shown_x["ci_high"], strict=True)]
    width = max(map(len, bounds), default=0) + 2
    # the interval left-aligned and set apart: a right-aligned "≥ 1.2×" ran into the verdict beside it and read as
    # "≥ 1.2× faster, amount too wide to read", a bound nothing printed supported
    print(pd.DataFrame({"kernel": shown_x["kernel"], "size": shown_x["size_label"],
                        "speed-up (this machine over the other)": [table_ratio(*r) if pd.notna(r[0]) else "" for r in
                                                                   zip(shown_x["speedup"], shown_x["ci_low"],
                                                                       shown_x["ci_high"], strict=True)],
                        "interval": [b.ljust(width) for b in bounds],
                        "verdict": shown_x["verdict"]}).to_string(index=False))
    if shown_x["speedup"].notna().any():   # a key to a column only where the column prints something
        print("(speed-up above 1: this machine was faster)")
    if any(b.startswith(("≥", "≤")) for b in bounds):   # a one-sided interval says which end it is, and why alone
        print("(≥ x: the low end of that comparison's 99% interval, its high end too far to inform; ≤ x: the high "
              "end alone)")
    xblock = NoteBlock()
    for _, v in judged.iterrows():
        # the scatter between two machines is what they differ in, kernel by kernel: its reasons were said once above,
        # so each line names them in a few words, and the load and advice they share are notes under the lines
        rerun = ("rerun this machine's side while it is otherwise idle" if here_busy else
                 "no rerun of either machine narrows it: the kernels favour each machine differently")
        claim = verdict_claim(v, "the other host", "this machine", here_busy,
                              wide_because="" if here_busy else
                              "the machines' scatter around their common ratio, printed above", rerun=rerun)
        check_claim(v, claim.text())
        check_claim(v, claim.head)
        xblock.add(f"{v['kernel']} at {v['size_label']}", claim)
    print("\\n".join(f"  {x}" for x in xblock.render()))
"""),
    code("""
from workbench.report import write_report

ids = [run_a.run_id] + ([remote_id] + [r.run_id for r in ours] if remote_id is not None else [])
for fmt in ("html", "md", "csv", "json"):
    print("wrote", write_report(merged, ids, Path(REPORT_DIR) / f"merged.{fmt}"))
"""),
]

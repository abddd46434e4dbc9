"""Tutorial: tuning the numba tiled GEMM — declared tunables, the search, and tuned vs hand-picked in one run."""

from _cells import code, md, params

CELLS = [
    md("""
# Tuning the tiled GEMM

`numba-tiled` (tutorial 04) packs `b` into NB-column tiles of KC rows and hands MC-row blocks of `a` to the
cores. Those three numbers were picked by hand on one machine; the best ones depend on the vector width
(AVX-512 or AVX2) and the caches of the CPU the kernel runs on. So the variant **declares** them as tunable
parameters, with the values worth trying and a restriction between them, as Kernel Tuner's `tune_params`
and `restrictions` do, and the workbench searches them **here**:

- every configuration is checked against the float64 reference (odd sizes, then the tuned size) before it
  is timed; a wrong one is stored as `incorrect` and never chosen;
- every configuration's row goes into the results store, under one run;
- the best is kept in the configuration file for this device, dtype and shape class, and every later
  build of the variant (`workbench bench`, `workbench.benchmark`) uses it and records it in
  `tuned_config`.

From a shell: `workbench tune --kernel gemm --variant numba-tiled --backend numba --strategy bayes --budget 120`.
"""),
    params("""
SMALL = False        # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False         # True: 1024³ with three candidates confirmed (with TUNE_BUDGET_S = 120: several minutes)
BUDGET_S = 0.2       # timing budget per cell of the comparison
TUNE_BUDGET_S = 30   # wall time of the search (longer finds better tiles more often)
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.judge.verdicts import MIN_EFFECT, is_disturbed
from workbench.report.claims import (busy_words, check_claim, disturbance_text, machine_busy, medians_disagree,
                                     medians_ratio, pair_verdicts, reading, settled_direction, table_ratio,
                                     verdict_claim)
from workbench.report.claim_notes import Claim, NoteBlock
from workbench.report.claim_words import noisy_cells_text

import os
import tempfile

import numpy as np

# A configuration file of this notebook's own, so that running the tutorial leaves yours alone
# (workbench tune writes to $WORKBENCH_CONFIG; set before the first benchmark, worker processes inherit it).
os.environ["WORKBENCH_CONFIG"] = os.path.join(tempfile.mkdtemp(), "config.json")

from workbench.catalog import get_variant, registry
from workbench.catalog.spec import format_config
from workbench.tuning import tune

tutorial.begin(FULL)

N = 128 if SMALL else 1024 if FULL else 512
SIZE = {"m": N, "n": N, "k": N}
TUNE_CMD = f"workbench tune --kernel gemm --variant numba-tiled --backend numba --size {N}x{N}x{N}"
BENCH_CMD = ("workbench bench --kernels gemm --variants numba-tiled[NB=...,KC=...,MC=...] numba-tiled "
             f"--backends numba --sizes {N}x{N}x{N} --no-tuned")


def rerun_advice(rows, command, rounds_flag):
    # what would settle a comparison, from what its own rows recorded of the machine: on a busy one a quieter
    # machine, not more rounds (docs/statistics.md, "Where the power goes": at load 10-11 nine rounds gave floors
    # of ±25-28% against ±11-12% with three); on an idle one more rounds; `command` is what reruns it
    if machine_busy(rows):   # by the threshold the rows' own noisy mark uses, said with it (busy_words)
        return (f"rerun it on a quieter machine ({command}): {busy_words(rows)}, and more rounds on a busy machine "
                "add its disturbance too")
    return f"rerun it with more rounds ({command} {rounds_flag})"


def busy_note(rows, beside=""):
    # what the rows recorded of the machine, said beside every verdict they give (as other tutorials' "other
    # processes used ..."): every compared cell marked noisy, else the busy share past the rows' own mark; "" where
    # neither, or where the sentence ``beside`` it already gives the share (its advice to rerun on a quieter machine),
    # so a settled verdict from a busy machine never reads as if the machine were quiet
    said = noisy_cells_text(rows) or busy_words(rows)
    return f"; {said}" if said and "other processes" not in beside else ""


def pair_rows(rows, *configs):
    # the rows of ``configs`` (the hand-picked tiles, a candidate) among a run's rows
    names = {registry.configured("gemm", "numba-tiled", c).name for c in configs}
    return rows[rows["variant"].isin(names)]


def fig3(x):
    # three significant figures, trailing zeros kept (1.50, 2.17, 0.985): every figure a rule is checked at alike
    return f"{x:.{max(0, 2 - int(np.floor(np.log10(abs(x)))))}f}" if np.isfinite(x) and x else f"{x:g}"


def gemm_ceiling(rows):
    # the GEMM ceiling (GFLOP/s) the rows name, None where they name none
    ceiling = pd.to_numeric(rows.get("ceiling_gflops", pd.Series(dtype=float)), errors="coerce").dropna()
    return float(ceiling.max()) if len(ceiling) else None


def once_rate_cell(g, top, medians_above):
    # a single timing's GFLOP/s; past the ceiling, where the confirmation's medians are not, marked implausible
    if g is None:
        return ""
    return f"{g:.0f}" + (" (implausible: above the ceiling)" if top and g > top and not medians_above else "")


def above_ceiling_note(rates, top, medians_above):
    # the single timings above the ceiling, said: implausible as this kernel's speed where the confirmation's
    # medians (rounds, not one draw) stay below it; where those medians pass it too, the ceiling is what is low
    above = [g for g in rates if g is not None and top and g > top]
    if not above:
        return ""
    head = (f"{len(above)} single timing{'s' * (len(above) > 1)} read above the {top:.0f} GFLOP/s GEMM ceiling "
            f"these rows name (up to {max(above):.0f} GFLOP/s)")
    if medians_above:
        return (head + ", as the confirmation's medians do (below): on a CPU that ceiling is numpy's BLAS at the "
                "probe's own size")
    return (head + ", while the confirmation's medians stay below it: implausible as this kernel's speed (one "
            "timing each, no rounds behind it), so they are marked and not read")


def ms_column(values):
    # one precision for a column of single timings: three significant digits of the smallest ("1.74" beside
    # "1.78", so the fastest trials, the ones the confirmation measured again, can be told apart); None stays blank
    known = [x for x in values if x is not None and x > 0]
    decimals = max(0, 2 - int(np.floor(np.log10(min(known))))) if known else 2
    return [f"{x:.{decimals}f}" if x is not None else "" for x in values]
"""),
    md("""
## What the variant declares
"""),
    code("""
tiled = get_variant("gemm", "numba-tiled")
print("restrictions:", tiled.restrictions, "->", len(tiled.space()), "valid configurations")
pd.DataFrame([{"tunable": t.name, "values": t.values, "hand-picked": t.default, "what": t.description}
              for t in tiled.tunables])
"""),
    md("""
## The search

`strategy="bayes"` is optuna's TPE sampler (`"grid"` and `"random"` are the others). The hand-picked
configuration is measured first, so the search always knows what it has to beat. Each configuration is
timed once (one cell: a warm-up, then a short loop of calls, all in one moment of the machine), so the budget
covers many of them; one timing calls no winner: the fastest of many noisy single
timings is biased low, and every single timing carries the moment it was taken (where the confirmation below
is not disturbed, the plot sets this run's single
timings beside the medians of the same tiles, so you see how far apart they were; where it is, its medians are
not shown, and the plot says so). So the tuner then **confirms**: the few fastest (two; three with FULL; a SMALL run
searches 4 configurations and confirms only the fastest one, in 3 rounds, enough to check that the notebook
runs and too few to rank candidates) are measured with the hand-picked one in one run of interleaved rounds,
and a candidate is kept only where the paired verdict calls it faster; otherwise the hand-picked tiles are kept.
"""),
    code("""
CONFIRM = 1 if SMALL else 3 if FULL else 2   # candidates confirmed (the few fastest of the search)
CONFIRM_ROUNDS = 3 if SMALL else 5            # interleaved rounds of the confirmation
result = tune("gemm", "numba-tiled", "numba", params=SIZE, strategy="bayes", budget_s=TUNE_BUDGET_S,
              max_trials=4 if SMALL else None, confirm=CONFIRM, confirm_rounds=CONFIRM_ROUNDS, progress=False)
trials = pd.DataFrame([{"trial": t.number, "config": format_config(t.config), "status": t.status,
                        "ms (one timing)": t.median_s * 1e3 if t.median_s else None,
                        "lowest so far (ms)": t.best_so_far_s * 1e3 if t.best_so_far_s else None}
                       for t in result.trials])
shown_trials = trials.assign(**{c: ms_column([None if pd.isna(x) else x for x in trials[c]])
                                for c in ("ms (one timing)", "lowest so far (ms)")})
print(f"{len(result.trials)} of {result.space_size} configurations, {result.shape_class}, device {result.device}"
      + (": the whole space, so within this budget the search was exhaustive and the sampler only set the order"
         if len(result.trials) == result.space_size else ""))
assert result.best is not None and result.best.status == "ok"
assert result.default is not None and result.trials[0].config == tiled.default_config()
v = result.verdict
if v is None:   # no candidate and the default were both ok in the confirmation run: nothing to judge
    from workbench.store.database import open_store
    rows = open_store(None).results([result.confirm_run_id]) if result.confirm_run_id else None
    statuses = rows["status"].value_counts().to_dict() if rows is not None and len(rows) else {}
    print(f"confirmation: nothing could be judged (its rows: {statuses or 'none'}); "
          f"kept {format_config(result.kept.config)}, the hand-picked tiles")
    assert result.kept.config == tiled.default_config()
    pick = result.best.config   # nothing confirmed: the search's lowest single timing is checked below
else:
    from workbench.store.database import open_store
    conf = open_store(None).results([result.confirm_run_id])   # the confirmation's rows (their ceilings, below)
    # what the confirmation's rows recorded of the machine decides the advice (a quieter machine where it was busy,
    # more rounds where not), and the command that reruns it is `workbench tune`: it alone changes what is kept
    advice = rerun_advice(conf, TUNE_CMD, "--confirm-rounds 10")
    every_disturbed = all(is_disturbed(float(cv["floor"])) for cv in result.candidates)
    if every_disturbed:   # no candidate's estimate informs: none is named as "the" one reported
        print(f"confirmation: every candidate's comparison with the hand-picked tiles was disturbed "
              f"({disturbance_text(conf) or 'no load recorded'}). None was settled faster, and no paired speed-up "
              f"ranks them. Kept {format_config(result.kept.config)}, the hand-picked tiles. "
              f"{advice[:1].upper()}{advice[1:]}.")
    else:
        claim = verdict_claim(v, "hand-picked", format_config(v["against"]),
                              disturbed_by=disturbance_text(conf), rerun=advice)
        confirmation = claim.text()
        check_claim(v, confirmation)   # the sentence says what the confirmation's verdict says, and nothing more
        check_claim(v, claim.head)     # the line prints the head; its reasons are notes under it
        kept = (f"kept {format_config(result.kept.config)}"
                + ("" if v["settled"] else " (the hand-picked tiles: nothing was settled as faster)"))
        block = NoteBlock()
        block.add(f"confirmation ({len(result.candidates)} candidate{'s' * (len(result.candidates) != 1)} against "
                  f"the hand-picked tiles, {max(CONFIRM_ROUNDS, 3)} interleaved rounds)",
                  Claim(f"{claim.head}; {kept}", (*claim.reasons, busy_note(
                      pair_rows(conf, tiled.default_config(), v["against"]), confirmation)[2:])))
        print(block)
    # every candidate the confirmation measured, each against the hand-picked tiles in the same run, as the tuner
    # judged it (result.candidates: the reported one among them)
    # one precision for the list: the finest any candidate's interval supports (claims.table_ratio), so
    # "0.83×" and "0.885×" do not stand side by side; a disturbed comparison's estimate informs nothing
    shown = [cv for cv in result.candidates if not is_disturbed(float(cv["floor"]))]
    decimals = max((len(t.rstrip("×").partition(".")[2]) for t in
                    (table_ratio(cv["speedup"], cv["ci_low"], cv["ci_high"]) for cv in shown) if t), default=2)
    for cv in result.candidates:
        said = (f"paired speed-up {cv['speedup']:.{decimals}f}× ({reading(cv)})" if cv in shown else
                "disturbed: no estimate")
        print(f"  candidate {format_config(cv['against'])}: {said}")
    assert v in result.candidates or any(c["speedup"] == v["speedup"] for c in result.candidates)
    assert (result.kept.config != tiled.default_config()) == v["settled"]   # kept only on a settled "faster"
    # the pair checked side by side below: the tuner's reported candidate (the one settled faster with the highest
    # paired speed-up, else the undisturbed one with the highest); where every comparison was disturbed no estimate
    # ranks them, so the candidate with the lowest single timing in the search
    once = {format_config(t.config): t.median_s for t in result.trials if t.median_s}
    pick = (min((cv["against"] for cv in result.candidates), key=lambda c: once[format_config(c)])
            if every_disturbed else v["against"])
    print(f"checked side by side below: {format_config(pick)}, "
          + ("the lowest single timing in the search among the candidates (every comparison disturbed)"
             if every_disturbed else
             ("the one candidate confirmed, settled faster" if len(result.candidates) == 1 else
              "the settled-faster candidate with the highest paired speed-up") if v["settled"] else
             ("the one candidate confirmed, not settled faster" if len(result.candidates) == 1 else
              "the undisturbed candidate with the highest paired speed-up (none settled faster)")))
# each single timing as GFLOP/s beside the GEMM ceiling the confirmation's rows name: one above it, where the
# confirmation's medians stay below, is flagged implausible (one timing, no rounds behind it)
conf_rows = open_store(None).results([result.confirm_run_id]) if result.confirm_run_id else pd.DataFrame()
top = gemm_ceiling(conf_rows)
med_rates = ([2 * N**3 / m / 1e9 for m in (v["median_a"], v["median_b"]) if np.isfinite(m) and m > 0]
             if v is not None else [])
medians_above = bool(top and med_rates and max(med_rates) > top)
rates_once = [2 * N**3 / (x / 1e3) / 1e9 if x is not None and not pd.isna(x) else None
              for x in trials["ms (one timing)"]]
shown_trials["GFLOP/s (one timing)"] = [once_rate_cell(g, top, medians_above) for g in rates_once]
if note := above_ceiling_note(rates_once, top, medians_above):
    print(note)
shown_trials
"""),
    code("""
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

ok = trials[trials["status"] == "ok"]
fig, ax = plt.subplots(figsize=(7, 3.5))
# the search's single timings: dots and the solid step; the hand-picked tiles' own dot ringed in red (a line across
# the plot at its height would lie on the step until a trial beats it, and the two could not be told apart)
ax.scatter(ok["trial"], ok["ms (one timing)"], s=14, color="0.6", zorder=3,
           label="configuration (search: one timing)")
ax.step(trials["trial"], trials["lowest so far (ms)"], where="post", color="C0", lw=1.5,
        label="lowest single timing so far (search)")
ax.scatter([result.trials.index(result.default)], [result.default.median_s * 1e3], s=90, facecolors="none",
           edgecolors="C3", lw=1.5, zorder=4, label="hand-picked (search: its one timing)")
v = result.verdict
# the confirmation's medians, unless its rounds disagreed past the point where a median can stand (disturbed)
medians = v is not None and all(np.isfinite([v["median_a"], v["median_b"]])) and not is_disturbed(float(v["floor"]))
if medians:   # what the rounds measured: the confirmation's medians, the figures the verdict rests on (dashed)
    ax.axhline(v["median_a"] * 1e3, color="C3", ls="--", lw=1.5,
               label=f"hand-picked (confirmation median, {max(CONFIRM_ROUNDS, 3)} rounds)")
    ax.axhline(v["median_b"] * 1e3, color="C2", ls=(0, (6, 2, 1, 2)), lw=1.5,
               label=f"the search's pick (confirmation median, {max(CONFIRM_ROUNDS, 3)} rounds)")
ax.xaxis.set_major_locator(MaxNLocator(integer=True))   # trials are counted: no 0.5 ticks
ax.set(xlabel="trial", ylabel="ms per call", title=f"numba-tiled gemm {N}³ float32: the search")
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
plt.show()
# single timings steer the search; a conclusion is the confirmation's, from its rounds (said above)
spread = ok["ms (one timing)"]
slowest = ok.loc[spread.idxmax()]
lo_ms, hi_ms = ms_column([spread.min(), spread.max()])
# which configurations were measured again after the search: the hand-picked tiles and the confirmed candidates
# (the confirmation), the pick (side by side, below); only the others are single draws
side_by_side = pick != result.default.config   # the check below runs only where the pick is not hand-picked
again = {format_config(cv["against"]): "a candidate, measured again in the confirmation" for cv in result.candidates}
if result.confirm_run_id or side_by_side:
    again[format_config(result.default.config)] = "the hand-picked tiles, measured again" + " and".join(
        w for w, hit in ((" in the confirmation", result.confirm_run_id), (" side by side below", side_by_side)) if hit)
if side_by_side and format_config(pick) in again:
    again[format_config(pick)] += " and side by side below"
elif side_by_side:
    again[format_config(pick)] = "the search's pick, measured again side by side below"
print(f"single timings ran from {lo_ms} to {hi_ms} ms (the slowest, trial {slowest['trial']}, {slowest['config']}, "
      + (f"{again[slowest['config']]}: its one timing in the search is not its time over rounds)."
         if slowest["config"] in again else "is one draw, never repeated)."))
if medians:   # each confirmed configuration: its one timing in the search against its median over the rounds
    offs, onces = [], []
    for label, cfg, med in [("hand-picked", result.default.config, v["median_a"]),
                            ("the search's pick", v["against"], v["median_b"])]:
        once = next(t.median_s for t in result.trials if t.config == cfg)
        offs.append(max(once, med) / min(once, med))
        onces.append(once / med)
        print(f"{label} ({format_config(cfg)}): {once * 1e3:.3g} ms once in the search, {med * 1e3:.3g} ms as the "
              f"median of the confirmation's rounds ({offs[-1]:.3g}× apart)")
    lead = result.default.median_s / next(t.median_s for t in result.trials if t.config == v["against"])
    # both off the same way: a shift of the search's moment (the hand-picked tiles were not selected), not the
    # low bias of picking the fastest of many noisy timings
    # what the numbers show, no cause: one timing each carries no interval to name one
    side = (" (both read below their confirmation medians, the hand-picked tiles' too, which nothing selected)"
            if max(onces) < 1 else " (both read above their confirmation medians)" if min(onces) > 1 else "")
    lead_text = (f"matched hand-picked's ({result.default.median_s / lead * 1e3:.3g} ms against "
                 f"{result.default.median_s * 1e3:.3g} ms)" if f"{lead:.2g}" in ("1", "1.0") or f"{1 / lead:.2g}"
                 in ("1", "1.0") else f"read {lead:.2g}× faster than hand-picked's" if lead > 1 else
                 f"read {1 / lead:.2g}× slower than hand-picked's")
    # the medians as GFLOP/s, beside the GEMM ceiling the confirmation's rows name (tutorial 04's roof)
    ceiling = pd.to_numeric(conf.get("ceiling_gflops", pd.Series(dtype=float)), errors="coerce").dropna()
    rates = [2 * N**3 / m / 1e9 for m in (v["median_a"], v["median_b"])]
    if len(ceiling):
        top = float(ceiling.max())
        print(f"as GFLOP/s: hand-picked {rates[0]:.0f}, the pick {rates[1]:.0f}, against the {top:.0f} GFLOP/s GEMM "
              f"ceiling these rows name (source: {conf['ceiling_source'].dropna().iloc[0]})"
              + (": above it, which a kernel can be, since on a CPU that ceiling is numpy's BLAS at the probe's own "
                 "size, not the hardware's peak (tutorial 04)" if max(rates) > top else ""))
    # what the search's own rows recorded of the machine: a single timing is one short window, and on a busy machine
    # a window can land while another process holds the core a parallel region waits for (the confirmation's
    # median of rounds rides such spells out); said, where the rows recorded it, not left for the reader to guess
    search_rows = open_store(None).results([result.run_id])
    searched = disturbance_text(search_rows) if machine_busy(search_rows) else ""
    print(f"In the search the pick's one timing {lead_text}. A single timing carries no interval, so that lead is "
          f"no finding: single timings were up to {max(offs):.3g}× off from the same tiles' medians here{side}."
          + (f" They were taken while {searched}: each is one short window of a busy machine." if searched else ""))
    print("In the plot, the grey dots, the solid blue step and the red ring are the search's single timings (no "
          f"finding). The two dashed lines are the confirmation's medians over its {max(CONFIRM_ROUNDS, 3)} rounds. "
          "Its paired verdict above, not the gap between the two lines, says whether the search beat the "
          "hand-picked tiles.")
elif v is not None:
    print(f"The confirmation was disturbed ({disturbance_text(conf) or 'no load recorded'}), so its medians are not "
          "shown and this run's single timings are not set beside them. Every mark of the plot is a single timing "
          "of the search (no finding). Whether the search beat the hand-picked tiles is the confirmation's "
          "verdict above.")
""", "figure"),
    md("""
## The search's pick vs hand-picked, side by side

The same check by hand: one benchmark run holding the search's pick (of the candidates the confirmation above
listed: the one settled faster with the highest paired speed-up, else the undisturbed one with the highest
paired speed-up, as the tuner reports; where every candidate's comparison was disturbed, no paired speed-up
ranks them and the pick is the candidate with the lowest single timing in the search, while the tuner keeps
the hand-picked tiles, since nothing was settled faster; the line above the table names the pick and which
rule chose it) and the hand-picked tiles
(`numba-tiled[NB=...,KC=...,MC=...]` names a configuration), measured in interleaved rounds and judged by the
package's paired verdict. It is a second run of a pair the confirmation already judged: where the two runs
agree, that is a finding; where they disagree, neither run's verdict is one. Unless either comparison was
disturbed (then its estimate informs nothing and is not weighed), two readings disagree where their verdicts
name two different settled words (faster against slower, or either against same), and also, whatever their
verdicts (both "faster" included), where their intervals do not overlap, where each interval excludes the other
run's estimate, or where their estimates lie on opposite sides of the ±5% band: two runs of one pair whose
figures cannot both hold say nothing settled about it. Then this run is printed as "this run alone", the line
after it names which of these held with both runs' figures, the figure's title says the same, and its marker is
hollow.
"""),
    code("""
def both_figs(a, b):
    # both runs' paired speed-ups and interval ends, all at three figures, so each rule can be checked by eye
    return (f"this run {fig3(a['speedup'])}× in {fig3(a['ci_low'])}×-{fig3(a['ci_high'])}×, the confirmation "
            f"{fig3(b['speedup'])}× in {fig3(b['ci_low'])}×-{fig3(b['ci_high'])}×")


def agreement(a, b, here, there):
    # the rule of the markdown above applied to two runs it found not to contradict each other, said with the
    # figures it was checked at: "agree" only where both settled the same word
    if "disturbed" in (here, there):
        who = ("both runs were" if here == there else "this run was" if here == "disturbed" else
               "the confirmation was")
        return (f"The two runs are not weighed against each other: {who} disturbed. A disturbed estimate informs "
                "nothing, so neither run confirms the other.")
    holds = [w for w, hit in (("this run's interval holds the confirmation's estimate",
                               a["ci_low"] <= b["speedup"] <= a["ci_high"]),
                              ("the confirmation's interval holds this run's estimate",
                               b["ci_low"] <= a["speedup"] <= b["ci_high"])) if hit]
    band = ("both estimates lie above" if min(a["speedup"], b["speedup"]) > 1 + MIN_EFFECT else
            "both estimates lie below" if max(a["speedup"], b["speedup"]) < 1 / (1 + MIN_EFFECT) else
            "the estimates are not on opposite sides of")
    # the claim first, then the figures it was checked at, in a sentence of its own
    checked = (f" Checked at {both_figs(a, b)}: the intervals overlap, {' and '.join(holds)}, and {band} the "
               f"±{MIN_EFFECT:.0%} band.")
    if here.split()[0] == there.split()[0] and "inconclusive" not in here:
        return (f"The two runs agree by the rule above: both read {here!r}, a finding at {N}³"
                + (" (this SMALL run's size)" if SMALL else "") + "." + checked)
    if here == there:   # both inconclusive
        return (f"The two runs do not contradict each other by the rule above, and neither settled a direction "
                f"(both read {here!r}): no finding." + checked)
    return (f"The two runs do not contradict each other by the rule above, but only one settled a word (this run "
            f"{here!r}, the confirmation {there!r}): that word rests on one run, not two." + checked)


def readings_apart(a, b):
    # two paired readings of one pair (speed-up of the pick over hand-picked) that cannot both hold: intervals
    # that do not overlap, or estimates on opposite sides of the ±5% band; None where they can, or where either
    # was disturbed (its estimate informs nothing)
    if is_disturbed(float(a["floor"])) or is_disturbed(float(b["floor"])):
        return None
    figs = both_figs(a, b)
    if a["ci_high"] < b["ci_low"] or b["ci_high"] < a["ci_low"]:
        return f"intervals do not overlap ({figs})"
    if not a["ci_low"] <= b["speedup"] <= a["ci_high"] and not b["ci_low"] <= a["speedup"] <= b["ci_high"]:
        return f"intervals each exclude the other's estimate ({figs})"
    if min(a["speedup"], b["speedup"]) < 1 / (1 + MIN_EFFECT) and max(a["speedup"], b["speedup"]) > 1 + MIN_EFFECT:
        return f"estimates point opposite ways past the ±5% band ({figs})"
    return None


def said_of(verdict):
    if is_disturbed(float(verdict["floor"])):   # as the candidates' list prints it ("disturbed: no estimate")
        return "disturbed"
    direction = settled_direction(verdict)
    return f"{direction[0]} (size not settled)" if direction else reading(verdict)


hand = registry.configured("gemm", "numba-tiled", tiled.default_config()).name
best = registry.configured("gemm", "numba-tiled", pick).name   # the pick named (and its rule said) above
# the command that reruns this check (`workbench tune` reruns the confirmation, which alone changes what is kept)
bench_cmd = f"workbench bench --kernels gemm --variants '{hand}' '{best}' --backends numba --sizes {N}x{N}x{N}"
print("hand-picked:", hand, "| the search's pick:", best)
contradicted = False   # the two runs of this pair read differently (used by the figure below)
disagreement = ""      # which of the markdown's rules made them disagree (the figure's title)
if best == hand:
    print("the search found nothing faster than the hand-picked tiles on this machine")
else:
    res = workbench.benchmark("gemm", variants=[hand, best], backends="numba", sizes=[SIZE],
                              rounds=3 if SMALL else 7, budget_s=BUDGET_S, progress=False,
                              name="tuned vs hand-picked gemm tiles")
    assert set(res.df["status"]) == {"ok"}
    for _, v in pair_verdicts(res.df, hand, best, "numba").iterrows():
        advice = rerun_advice(res.df, bench_cmd, "--rounds 10")
        claim = verdict_claim(v, "hand-picked", "the search's pick", disturbed_by=disturbance_text(res.df),
                              rerun=advice)
        sentence = claim.text()
        check_claim(v, sentence)
        check_claim(v, claim.head)   # the line prints the head; its reasons are notes under it
        # the confirmation's verdict on this same pair (None where the confirmation did not judge it)
        confirmed = next((cv for cv in result.candidates if cv["against"] == pick), None)
        # what each run says of the pair: its settled direction where only the size is unsettled, else its reading
        here, there = said_of(v), said_of(confirmed) if confirmed else None
        words = {here.split()[0], there.split()[0]} if there else set()
        # a contradiction: faster against slower, or a difference against "same"; and, even where one run is
        # inconclusive, two readings whose intervals do not overlap or whose estimates lie on opposite sides of
        # the ±5% band (an inconclusive 0.885× beside a settled 1.4× is not a confirmation of either)
        same_pair = bool(confirmed and confirmed.get("against") == pick)
        apart = readings_apart(v, confirmed) if same_pair else None
        contradicted = same_pair and "disturbed" not in words and (
            (len(words) == 2 and "inconclusive" not in words) or apart is not None)
        if not contradicted:
            block = NoteBlock()
            block.add(v["size_label"], Claim(claim.head, (*claim.reasons, busy_note(res.df, sentence)[2:])))
            print(block)
            if same_pair and not (there == "disturbed" and here != there):   # else the line below says it
                print(agreement(v, confirmed, here, there))
            if confirmed and confirmed.get("against") == pick and here != there:
                print(f"(the confirmation, an earlier run of the same pair, read {there!r}: "
                      + (f"it settled nothing, so the tuner kept {format_config(result.kept.config)}. The tuner "
                         "decides by its confirmation only: this check changes nothing that is kept; a new "
                         "`workbench tune` run would.)" if there in ("inconclusive", "disturbed") else
                         # this run's own word, as its line above says it: a disturbed run bounds the lead, it does
                         # not fail to tell them apart (11 printed "could not tell" beside "at least 1.3x faster")
                         ("" if here == "disturbed" else "this run could not tell them apart; "
                          if here == "inconclusive" else f"this run read {here!r}; ")
                         + f"the tuner kept {format_config(result.kept.config)} on the confirmation's verdict.)"))
            continue
        # two runs of one pair that read differently: neither verdict is a finding; what was kept follows the
        # confirmation, the run the tuner decided by
        opposed = words == {"faster", "slower"}
        # the figure's title says which of the markdown's rules held (both runs read "faster" and still disagree)
        disagreement = ("the two runs point opposite ways" if opposed else
                        f"the two runs' {apart.split(' (')[0]}" if apart else "the two runs' verdicts differ")
        print(f"{v['size_label']}, this run alone: {sentence}")
        # the finding (none) first, then why, what was kept, and what would settle it: one thing a sentence
        print("Neither run's verdict is a finding: "
              + ("the two runs of this pair point opposite ways" if opposed else
                 f"the two runs' {apart}" if apart else "the two runs of this pair disagree")
              + f". The confirmation, an earlier run of the same pair, read {there!r}; this run read {here!r} "
              f"(its rows: {disturbance_text(res.df) or 'no load recorded'}). The tuner kept "
              f"{format_config(result.kept.config)} on the confirmation's verdict. "
              + ("Rerun both on a quieter machine before trusting either (`workbench tune` for the confirmation)."
                 if machine_busy(res.df) else "Rerun both with more rounds before trusting either."))
"""),
    code("""
if best != hand:
    # the statistic the sentence above quotes: the paired speed-up with its interval, and its verdict
    pv = pair_verdicts(res.df, hand, best, "numba").iloc[0]
    # the library plots' marker: hollow where nothing is settled (nor where the confirmation read otherwise)
    unsettled = reading(pv) == "inconclusive" or contradicted
    fig, ax = plt.subplots(figsize=(6, 2.2))
    if is_disturbed(float(pv["floor"])):   # an interval this wide informs nothing: drawn as the sentence says it
        ax.text(0.5, 0.5, "the comparison was disturbed: no interval is drawn" + chr(10)
                + ("(rerun on a quieter machine: see the line above)" if machine_busy(res.df) else
                   "(rerun with more rounds: see the line above)"), ha="center", va="center",
                transform=ax.transAxes)
        ax.set(xticks=[], yticks=[], title="one run, interleaved rounds: disturbed")
        plt.show()
    else:
        ax.errorbar([pv["speedup"]], [0], xerr=[[pv["speedup"] - pv["ci_low"]], [pv["ci_high"] - pv["speedup"]]],
                    fmt="o", color="C0", mfc="none" if unsettled else "C0", capsize=4,
                    label="hollow: not a finding" if unsettled else None)
        if medians_disagree(pv):   # the second figure the sentence quotes, where it lies
            ax.plot([medians_ratio(pv)], [0], "x", color="C1", ms=8, label="ratio of the cells' medians")
        ax.axvline(1, color="C3", ls="--", lw=1, label="hand-picked (1×)")
        ax.set(yticks=[], xlabel=f"speed-up of the search's pick over hand-picked (paired, {pv['coverage']:.1%} "
               "interval)", title="one run, interleaved rounds: " + (
                   "not settled (the cells' own medians fall outside the interval)" if medians_disagree(pv)
                   else f"this run alone: {reading(pv)}, no finding:" + chr(10) + disagreement
                   if contradicted else reading(pv)))
        ax.legend(loc="lower right", fontsize=8)
        plt.show()
else:
    plt.figure(figsize=(4, 1)); plt.text(0.1, 0.4, "hand-picked tiles were the best found"); plt.axis("off"); plt.show()
""", "figure"),
    md("""
## Every later build uses it

The kept configuration was stored for this device, dtype and shape class (`workbench config show` lists it).
A benchmark of plain `numba-tiled` at a size of the same class now builds it and says so in `tuned_config`
and in the row's message (both printed below); `workbench bench --no-tuned` builds the hand-picked tiles.
What it rests on is printed first: how many configurations the search timed (once each), how many the
confirmation measured again and in how many rounds, and what the machine was doing. A SMALL run stores a
choice from 4 single timings and one confirmed candidate: enough to show the mechanism, thin as evidence, and
stored in this notebook's own configuration file only.
"""),
    code("""
# the evidence behind what was stored, in counts: a choice from a handful of single timings on a busy machine is
# stored all the same, and every later build uses it: the counts say how much that choice rests on
kept_default = result.kept.config == tiled.default_config()
busy = busy_note(conf_rows)[2:]
print(f"stored {format_config(result.kept.config)}"
      + (" (the hand-picked tiles: nothing was settled faster)" if kept_default else "")
      + f"; the configuration file says '{result.entry()['verdict']}'. It rests on {len(result.trials)} of "
      f"{result.space_size} configurations timed once each in the search and {len(result.candidates)} "
      f"candidate{'s' * (len(result.candidates) != 1)} measured again against the hand-picked tiles in "
      f"{max(CONFIRM_ROUNDS, 3)} interleaved rounds."
      + (f" {busy[:1].upper()}{busy[1:]}." if busy else "")
      + ("" if kept_default else " A longer search (TUNE_BUDGET_S) and more rounds (`workbench tune "
         "--confirm-rounds 10`) on a quiet machine would make it firmer."))
plain = workbench.benchmark("gemm", variants="numba-tiled", backends="numba", sizes=[SIZE], rounds=1,
                            budget_s=BUDGET_S, progress=False, name="numba-tiled with its tuned tiles")
row = plain.df.iloc[0]
print("tuned_config:", row["tuned_config"])
print("message:", row["message"])
assert row["status"] == "ok" and row["tuned_config"].startswith(format_config(result.kept.config) + " (")
assert result.run_id in row["tuned_config"]
"""),
]

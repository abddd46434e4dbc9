"""Tutorial: LLM shapes."""

from _cells import code, md, params

CELLS = [
    md("""
# LLM shapes

A sweep over powers of two misses sizes that models run: GPT-2's hidden width is 768, which no power of two
is (Llama-3-8B's 4096 happens to be one; the table below lists both). `workbench.core.datasets` ships the
layer shapes of common transformer models (from their published configs); each kernel spec maps
(batch, seq, hidden, intermediate, ...) to its own sizes — RMSNorm runs on `batch·seq` rows of `hidden`
columns, the MLP's GELU on `batch·seq × intermediate`. Here we measure one of them, RMSNorm, at those shapes in
two dtypes.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: batch 1 and 4 at 128 and 512 tokens (8 shapes), on every backend (several minutes)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
DTYPES = ["float32", "float16"]
STORE = "workbench-results.sqlite"
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.registry import all_backends
from workbench.report.busy_caveat import shared_machine_advice
from workbench.report.claims import (bimodal_fields, cache_text, check_claim, estimate_text,
                                     last_level_cache_bytes, machine_busy, reading, settled_direction,
                                     verdict_claim)
from workbench.report.claim_notes import NoteBlock
from workbench.core.units import fmt_bytes, fmt_seconds
from workbench.judge.compare import judge_pair
from workbench.judge.verdicts import is_disturbed

import json

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from workbench.api import Results
from workbench.core.datasets import llm_shapes            # the table of model shapes
from workbench.report.plots.lines import quartile_span
from workbench.report.plots.series import (disturbed_legend, disturbed_mask, mark_disturbed, mark_modes, mark_noisy,
                                          mode_medians, modes_legend, noisy_legend, noisy_mask)
from workbench.report.styles import series_key, styles_for
from workbench.core.units import fmt_tick_time
from workbench.judge.compare import row_times
from workbench.store import open_store
from workbench.sweep.suites import llm_shapes as layer_cases  # model shape x batch x seq, ready for a sweep
from workbench.sweep import SweepSpec, run_sweep
from workbench.judge.verdicts import typical_noise
from workbench.judge.disturbed import CELL_RULE
from workbench.roofs.ceilings import noise_text
from workbench.report.marked_times import marked_times
from workbench.report.beyond_noise import disturbed_cells

tutorial.begin(FULL, small=SMALL,
                leaves_out="llama-3-8b and the default run's tokens: it measures gpt2 alone (one panel, not one per "
                           "model) at batch 1 and 16 and 64 tokens (b1·s16, b1·s64)")
"""),
    code("""
llm_shapes()[["model", "family", "hidden", "intermediate", "heads", "kv_heads", "layers"]]
"""),
    code('''
# SMALL: gpt2 alone, batch 1 at 16 and 64 tokens (b1·s16, b1·s64), only to check that the notebook runs;
# default: gpt2 and llama-3-8b, batch 1 at 64 and 256 tokens; FULL: batch 1 and 4 at 128 and 512 tokens
if SMALL:
    cases = layer_cases(models=["gpt2"], batch_sizes=[1], seq_lengths=[16, 64])
    print(tutorial.skipped_in_small("llama-3-8b's shapes; gpt2's alone are measured, at batch 1 and 16 and 64 "
                                    "tokens, so the figure below has one panel"))
else:
    cases = layer_cases(models=["gpt2", "llama-3-8b"], batch_sizes=[1, 4] if FULL else [1],
                        seq_lengths=[128, 512] if FULL else [64, 256])
# the suite lists each shape once per KV-cache length (attention needs it); rmsnorm does not: one case each
cases = list({(c["model"], c["batch"], c["seq"]): c for c in cases}.values())
# one device per runtime ("opencl" names the best OpenCL device); FULL: every backend
backends = tutorial.backends_for(FULL, ["numpy", "numba", "torch-cpu", "opencl"])
spec = workbench.get_kernel("rmsnorm")


def size_key(params):
    """A measured size as a hashable key (rows store their parameters as JSON)."""
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
'''),
    md("""
## RMSNorm at those shapes, in each dtype

Half precision halves the bytes a kernel moves. Whether that makes it faster depends on the backend
computing in half precision efficiently, which is measured here rather than assumed. Both dtypes run in
one sweep: every round measures each cell of both in a shuffled order, and a variant's float16 and float32
rows are compared round by round. That pairing removes the machine's slow drift, which moves both visits of a
round alike; it does not remove what changes between the two visits — a disturbance that hits one dtype's visit,
and drift that grows with the number of cells measured between them (docs/statistics.md) — which stays in each
comparison's interval. Where a disturbance leaves a dtype's rounds in two modes, the sentence below
names both modes, and says who was faster (never by how much) only where every mode lies on the same side of the
other dtype, past the noise. A variant that does not
implement a dtype is recorded as `unsupported` with the reason, not silently dropped.
"""),
    code("""
outcome = run_sweep(SweepSpec(kernels=["rmsnorm"], backends=backends, dtypes=DTYPES, llm_shapes=cases,
                              budget_s=BUDGET_S),
                    store=open_store(STORE), name="rmsnorm at LLM shapes", progress=False)
both = Results(outcome.results(), [outcome.run_id], outcome.store)
both
"""),
    md("""
One panel per model measured (their widths differ: gpt2 and llama-3-8b; a `SMALL` run measures gpt2 alone and
draws its one panel), the model's shapes in order along x, one colour per
variant@backend (the report's colours), solid for float32 and dashed for float16:
"""),
    code("""
ok = both.df[both.df["status"] == "ok"].copy()
ok["key"] = [size_key(p) for p in ok["params"]]
styles = styles_for(both.df)
models = list(shape_labels)
fig, axes = plt.subplots(1, len(models), figsize=(4.6 * len(models) + 2.4, 3.6), squeeze=False)
n_noisy = n_wide = n_two = 0
for ax, model in zip(axes[0], models):
    order = list(shape_labels[model])
    sub = ok[ok["key"].isin(order)]
    for (variant, backend, dtype), g in sub.groupby(["variant", "backend", "dtype"], sort=True):
        g = g.assign(x=[order.index(k) for k in g["key"]]).sort_values("x")
        style = styles[series_key(variant, backend)]
        # the library plots' marks (report.plots.series): a two-mode cell as its two modes, a disturbed one as a
        # cross, neither a point of the line (its median is no value to read); a hollow ring over a noisy one
        # a cell both disturbed and in two modes is drawn disturbed, as the table (report.marked_times) and the
        # sentences read it: 06 drew two such cells as two-mode bars beside a table reading "disturbed"
        wide = disturbed_mask(g)
        modes = [None if w else m for m, w in zip(mode_medians(g), wide, strict=True)]
        two = np.array([m is not None for m in modes], dtype=bool)
        plain = ~(two | wide)
        ax.plot(g["x"], g["median_s"].where(plain), marker=style.marker, color=style.color, ms=4,
                ls="-" if dtype == "float32" else "--", label=f"{variant} @ {backend}, {dtype}")
        noisy = noisy_mask(g) & plain
        # the ring in the series' own marker, so a hollow square still reads as numba's square
        mark_noisy(ax, g["x"][noisy], g["median_s"][noisy], style.color, size=6, marker=style.marker)
        # a disturbed cell as its quartiles (an x at each, dotted between), as the legend says
        mark_disturbed(ax, g["x"][wide], g["median_s"][wide], style.color, size=6,
                       span=quartile_span(g[wide], "median_s"))
        mark_modes(ax, g["x"][two], [m for m in modes if m is not None], style.color)
        n_noisy, n_wide, n_two = n_noisy + int(noisy.sum()), n_wide + int(wide.sum()), n_two + int(two.sum())
    ax.set_xticks(range(len(order)), [shape_labels[model][k] for k in order], rotation=30, ha="right")
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: fmt_tick_time(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    hidden = dict(order[0])["cols"]
    ax.set_title(f"rmsnorm at {model} shapes (hidden {hidden})")
    ax.set_xlabel("batch·seq")
    ax.set_ylabel("time per call (median)")
    ax.grid(True, alpha=0.3)
noisy_legend(axes[0][-1], n_noisy)
disturbed_legend(axes[0][-1], n_wide)
modes_legend(axes[0][-1], n_two)
# long handles, so a dashed (float16) entry reads dashed beside its marker
axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False, handlelength=4)
fig.tight_layout()
plt.show()
# how many cells the rings mark, and why, said outright: the noise notes the rows stored (a ring alone does not say)
if n_noisy:
    hollow = noisy_mask(ok) & ~disturbed_mask(ok) & np.array([m is None for m in mode_medians(ok)], dtype=bool)
    why = pd.Series([noise_text(r) for r in ok[hollow].to_dict("records")])
    parts = {"other processes took more than a quarter of the CPU while they ran": why.str.contains("other process"),
             "their rounds scattered by more than 10%": why.str.contains("spread|scatter")}
    said = ", ".join(f"{'all' if int(m.sum()) == n_noisy > 1 else int(m.sum())} because {k}"
                     for k, m in parts.items() if m.any())
    every = len(ok) > n_noisy == len(ok) - n_wide - n_two > 1   # each cell drawn as a point: said so outright
    print((f"All {n_noisy} measured cells are noisy" if n_noisy == len(ok) else
           f"{n_noisy} of the {len(ok)} measured cells {'is' if n_noisy == 1 else 'are'} noisy")
          + (", every cell the figure draws as a point" + (f" (the other {n_wide + n_two} are drawn crossed out or "
                                                            "as two modes)" if n_wide + n_two else "")
             if every else "") + ' (hollow here, "~" in the table below)'
          + (f": {said} (a cell can have both)" if said.count(" because ") > 1 else f": {said}" if said else "")
          + ". A ring says a cell's time may sit off its kernel's own; the verdicts "
          "below pair float16 with float32 round by round, and their intervals carry that noise.")
""", "figure"),
    md("""
## What float16 did, per backend

Every variant@backend that ran both dtypes: float16 against float32 at each shape, judged by the
package's paired verdict (speed-up = time(float32) / time(float16)). The explanation printed for each
backend is the one that fits its verdicts; the cell asserts that every sentence says what its numbers say.
"""),
    code("""
def disturbed_fields(a, b):
    # a cell the pivot marks disturbed (its quartiles half its median apart) has no median to read, and its
    # comparison reads so (06 printed "float16 took 24.0x its time" of a float16 cell its pivot marked disturbed)
    wide = [dt for dt, row in (("float32", a), ("float16", b)) if disturbed_cells([dict(row)])]
    return {"cells_disturbed": len(wide), "disturbed_cells": " and ".join(wide)}


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

verdicts, block = [], NoteBlock()   # each shared reason said once, under the lines
for variant, backend, label, a, b in pairs:
    # the cells' own medians (the pivot below shows them) beside the paired estimate: where they part, or a side's
    # rounds fell in two modes, the pair is not settled (workbench.report.claims' rule)
    # a side whose rounds fell in two modes: named, and each mode set against the other side (claims.bimodal_fields)
    v = {**judge_pair(a, b, typical), "median_a": a["median_s"], "median_b": b["median_s"],
         **bimodal_fields(a, b, "float32", "float16"), **disturbed_fields(a, b)}
    # the rerun advice from what the pair's own two rows recorded of the machine (claims.machine_busy)
    claim = verdict_claim(v, "float32", "float16", busy=machine_busy(pd.DataFrame([a, b])))
    sentence = claim.text()
    check_claim(v, sentence)
    check_claim(v, claim.head)   # the line prints the head; its reasons are the block's notes
    verdicts.append({"variant": variant, "backend": backend, "shape": label, "speedup": v["speedup"],
                     "ci_low": v["ci_low"], "ci_high": v["ci_high"],
                     "floor": v["floor"], "verdict": v["verdict"], "sentence": sentence,
                     # who was faster where that is settled, even when the size is not (claims.settled_direction)
                     "said": settled_direction(v)[0] if settled_direction(v) else reading(v),
                     # a disturbed comparison's size is unknown ("at least ..."): never quoted in a range; nor the
                     # size of a pair with a cell the pivot marks disturbed (that cell has no median to read)
                     "size_settled": reading(v) in ("faster", "slower", "same")
                     and not is_disturbed(float(v["floor"]))
                     and not disturbed_cells([a.to_dict(), b.to_dict()])})
    block.add(f"{variant} @ {backend}, {label}", claim)
print(block)
table = pd.DataFrame(verdicts)
"""),
    code('''
def fp16_why(backend, said, speedups):
    """The explanation that fits a series' readings: one reading only where every shape the noise let us
    call agrees; the shapes it did not are counted, never explained."""
    called = [s for s in said if s != "inconclusive"]
    # an untold shape is noisy or disturbed: its own line above says which, and how to rerun
    # the untold shapes are counted on the summary line's head already: not said again here
    if not called:
        return "no shape's comparison told them apart: each line above says why and how to rerun."
    if set(called) == {"slower"}:
        if all_backends()[backend].runtime == "numpy":
            # the mechanism is background, not measured by these rows: said as such
            return ("these rows do not measure why (background: numpy has no float16 arithmetic of its own and "
                    "converts elements through float32 in its own loops).")
        # the count and ratios are the line's own (not restated); whether the shapes reach DRAM is said once for
        # every backend, under the lines
        return "these rows do not measure why."
    if set(called) == {"faster"}:
        top = max(sp for sp, s in zip(speedups, said) if s == "faster")
        return ("consistent with float16 moving half the bytes" + (
            f"; the best gain ({top:.2f}×) is more than the 2× that halving the bytes alone explains"
            if top > 2 else "") + ".")
    if set(called) == {"same"}:
        return "halving the bytes made no difference the noise lets us call at these shapes."
    return "the shapes disagree (see the verdict per shape above): no single reading holds here."


def lead(text):
    # a sentence's first letter capitalised, unless it starts with a name that is lower case (float16)
    return text if text.startswith("float16") else text[:1].upper() + text[1:]


summary = []
for (variant, backend), g in table.groupby(["variant", "backend"], sort=True) if len(table) else []:
    said = g["said"].tolist()   # faster / slower / same / inconclusive per shape (medians and modes counted)
    speedups = g["speedup"].tolist()
    counts = pd.Series(said).value_counts().to_dict()
    what = ", ".join(f"{'could not tell' if k == 'inconclusive' else k} at {n} of {len(g)}" for k, n in counts.items())
    # one reading at every shape: said as one ("was slower at both of its 2 shapes"), else counted per reading
    what = (f"was {next(iter(counts))} at {'each' if len(g) > 1 else 'the one'} of its {len(g)} "
            f"shape{'s' * (len(g) > 1)}" if len(counts) == 1 and "inconclusive" not in counts else
            f"against float32: {what} shapes")
    # the range quotes only the shapes whose verdict settled something: an inconclusive shape's ratio is noise
    # (a shape whose direction is settled but not its size is counted by its direction and quotes no figure)
    # each end as its line above prints it (claims.estimate_text: as precise as that shape's interval)
    settled = sorted((x, lo, hi) for x, lo, hi, r, k in zip(speedups, g["ci_low"], g["ci_high"], said,
                                                             g["size_settled"]) if r != "inconclusive" and k)
    shown = [estimate_text(1 / x, 1 / hi, 1 / lo) for x, lo, hi in settled]
    # "whose line gives a ratio": a line above that prints "took N× its time" (not a direction alone, nor a
    # disturbed or could-not-tell line); said in those words, not as "size settled" (a reader's undefined jargon)
    ratio = "" if not settled else shown[0] if shown[0] == shown[-1] else f"{shown[-1]} to {shown[0]}"
    span = ("; no line above gives a ratio" if not settled else
            f": float16 took {ratio} the float32 time (the paired estimates above)" if len(settled) == len(g) else
            f"; at the {'one shape' if len(settled) == 1 else f'{len(settled)} shapes'} whose line above gives a "
            f"ratio, float16 took {ratio} the float32 time")
    why = fp16_why(backend, said, speedups)
    # what the sentence says follows the verdicts it counts
    called = set(said) - {"inconclusive"}
    assert sum(counts.values()) == len(g)
    assert ("no float16 arithmetic" in why) == (all_backends()[backend].runtime == "numpy"
                                                and called == {"slower"}), why
    assert ("half the bytes" in why) == (called == {"faster"}), why
    assert ("disagree" in why) == (len(called) > 1), why
    assert ("no shape's comparison told them apart" in why) == (not called), why
    summary.append(f"{variant} @ {backend}: float16 {what}{span}. {lead(why)}")
print(chr(10).join(summary) or "no variant ran both dtypes here")
# whether the shapes reach DRAM is the same for every backend here: said once, under all the lines (06 repeated it
# word for word on each torch line and left it off numpy's, as if it were a torch caveat)
compared = ok[pd.Series(list(zip(ok["variant"], ok["backend"], strict=True)), index=ok.index).isin(
    set(zip(table["variant"], table["backend"], strict=True)) if len(table) else set())]
llc = last_level_cache_bytes(ok["backend"].iloc[0]) or 0
if len(compared) and llc >= compared["bytes"].max():
    print(f"Every shape compared fits in the {fmt_bytes(float(llc))} last-level cache (working sets below), so for "
          "every backend above these comparisons do not test what halving the DRAM traffic buys.")
# the advice names only the kernels in the comparisons above (06 named numba, which ran no float16)
if shared_machine_advice(compared):   # the floors above are this run's: what its share is of, and what to do
    print(f"({shared_machine_advice(compared)})")

bad = both.df[(both.df["status"] != "ok") & (both.df["dtype"] == "float16")]
for (variant, backend), g in bad.groupby(["variant", "backend"]):
    print(f"{variant} @ {backend}: float16 {g['status'].iloc[0]}: {str(g['message'].iloc[0]).splitlines()[0]}")
'''),
    code("""
# median time per call, per dtype (the same medians the pairs above were checked against); per variant, each
# model's shapes in the plot's order (by model, then rows), labelled as the plot labels them
order = list(dict.fromkeys(k for labels in shape_labels.values() for k in labels))
label_of = {k: "; ".join(f"{m} {labels[k]}" for m, labels in shape_labels.items() if k in labels) for k in order}
ok["shape"] = pd.Categorical(ok["key"].map(label_of), categories=list(dict.fromkeys(label_of.values())),
                             ordered=True)


# a cell's time as the pivot prints it (report.marked_times): its median, or, where its rounds fell in two modes,
# both modes with their rounds and no headline, with the results table's own marks ("~" noisy, ", disturbed")
ok["time"] = marked_times(ok)
pivot = ok.pivot_table(index=["variant", "backend", "shape"], columns="dtype", values="time", aggfunc="first",
                       observed=True)
print(f"working sets {fmt_bytes(float(ok['bytes'].min()))} to {fmt_bytes(float(ok['bytes'].max()))}; "
      + cache_text(float(ok["bytes"].max()), last_level_cache_bytes(ok["backend"].iloc[0])))
# a pointer to another output ("its verdict line above") only where that output is printed: a two-mode cell whose
# other dtype has no row (float16 unsupported) has no verdict line, and the note says so
modal = ok[ok["time"].str.contains("two modes")]
lined = set(zip(table["variant"], table["backend"], table["shape"])) if len(table) else set()
modal_lined = [(r["variant"], r["backend"], label_of[r["key"]]) in lined for r in modal.to_dict("records")]
if len(modal):
    # what the verdicts did with the modes, as they did it (claims.settled_direction): each mode set against the
    # other dtype's median; a direction only where every mode lies on one side past the noise
    print("(A cell whose rounds fell in two modes prints both, with how many rounds each drew: its median would "
          "headline one mode. "
          + ("Its verdict line above names both modes" if all(modal_lined) else
             "Where its pair has a verdict line above, that line names both modes" if any(modal_lined) else
             "No verdict line above judges it: the other dtype has no row at its shape to pair it with")
          + ("; it says who was faster only where every mode lies on the same side of the other dtype's median, "
             "past the noise, and never by how much.)" if any(modal_lined) else ".)"))
if ok["time"].str.contains("disturbed|~", regex=True).any():
    print(f"(~: a noisy cell; disturbed: {CELL_RULE}.)")
pivot.fillna("")
"""),
]

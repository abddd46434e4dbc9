"""Tutorial: compare functions already in a notebook — workbench.timeit and workbench.quick, no spec needed."""

from _cells import code, md, params

CELLS = [
    md("""
# Compare functions without writing a spec

Exploration often starts with two or three functions already in a notebook: *is my version faster than
`torch.softmax` here?* The catalog's kernel specs (tutorial 03) are where a kernel goes to be trusted;
before that, two calls do:

- `workbench.timeit(fn, *args)` times one callable: median, quartiles, a noise flag, the samples and the
  timer used, synchronising with the device the arguments live on (torch or CuPy arrays on a GPU, OpenCL
  buffers) or with `backend=`;
- `workbench.quick({...}, setup=..., sizes=...)` compares several callables over sizes, the way perfplot
  does, on the workbench's harness: interleaved rounds, the callables in a worker process of their backend
  (a crash or a hang is a row, not a dead notebook), every output checked against the first callable's, and the same
  `Results` as `workbench.benchmark()` — tables, verdicts, plots, reports and the store.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: eight sizes, 2**6 to 2**13 rows (a few minutes)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
"""),
    code("""
import workbench
from workbench import tutorial
from workbench.judge.verdicts import BUSY_RERUN_HINT, DISTURBED_FLOOR, is_disturbed, spread_disturbed
from workbench.core.units import fmt_seconds
from workbench.report.claims import check_claim, pair_verdicts, verdict_claim
from workbench.report.claim_notes import Claim, NoteBlock
from workbench.report.claims import interval_name, interval_text, medians_disagree

import numpy as np
import torch

tutorial.begin(FULL)

SIZES = [64, 257] if SMALL else [2**k for k in range(6, 14)] if FULL else [2**6, 2**9, 2**11]  # rows of 1024 float32
"""),
    md("""
## One callable

The measurement prints itself with a unit chosen for it; its fields are there for code (`median_s`, `q1_s`,
`q3_s`, `samples_s`, `noisy`, `timer_kind`). It gives two spreads, of two things. Its quartiles are the spread
of all its samples; where they lie half the median or more apart, it reads "disturbed" and gives no quartiles.
Its noise flag is about the medians of its rounds, taken one after another: it reads `~ noisy` with its reason
where those spread past 10% or fall in two groups, where the host's memory bandwidth dipped in a round, or where
other processes used past 25% of the CPU; otherwise `not noisy`, with the rounds' spread.
"""),
    code("""
x = torch.rand(4096, 1024)
m = workbench.timeit(torch.softmax, x, dim=1)
m
"""),
    code("""
print(f"{m.n_samples} samples in {m.rounds} rounds, {m.calls_per_sample} call(s) per sample; "
      f"answer in {m.wall_s:.2f} s")
assert m.q1_s <= m.median_s <= m.q3_s and m.backend == "torch-cpu"
"""),
    md("""
The same call measured again, as a notebook magic (as CuPy's `%gpu_timeit`): `%wb_timeit` times a statement
(and `%%wb_timeit` a cell) with the same timer, rounds and noise flag, on the device of the arrays it names,
and prints one line (`-o` also returns the measurement). It is a second measurement, seconds later, not a
copy of the first. The cell after it compares them: the two agree where each median lies within the other's
quartiles, and a measurement read disturbed gives no quartiles to compare against.
"""),
    code("""
%load_ext workbench.magics
m2 = %wb_timeit -o torch.softmax(x, dim=1)
"""),
    code("""
def agreement(m, m2) -> str:
    # two measurements of one call: each median against the other's quartiles. A disturbed one gives no quartiles
    # (its line above says why), so agreement is not read from it. The medians in ms to three significant figures,
    # trailing zeros kept ("4.00 ms", not "4 ms"), and the ratio of those printed figures
    shown = [f"{t.median_s * 1e3:#.3g}" for t in (m, m2)]
    ratio = max(map(float, shown)) / min(map(float, shown))
    head = f"timeit {shown[0]} ms, %wb_timeit {shown[1]} ms median: "
    shaky = [name for name, t in (("timeit", m), ("%wb_timeit", m2)) if t.disturbed]
    if shaky:
        who = "both read disturbed" if len(shaky) == 2 else f"{shaky[0]} read disturbed"
        why = "their lines above say why" if len(shaky) == 2 else "its line above says why"
        return (head + f"{who}, so there are no quartiles to compare ({why}), and whether the two agree cannot be "
                "read from them; the rerun to try is the one its line gives, for the cause it names.")
    m2_in_m, m_in_m2 = m.q1_s <= m2.median_s <= m.q3_s, m2.q1_s <= m.median_s <= m2.q3_s
    if m2_in_m and m_in_m2:
        return head + "each median lies within the other's quartiles: they agree."
    if not (m2_in_m or m_in_m2):
        return (head + f"they differ {ratio:.2f}×, beyond each other's quartiles. The quartiles measure the spread "
                "within one measurement, not between two taken seconds apart, and two measurements cannot say which "
                "is nearer this call's usual time. This is why quick() below judges with paired rounds.")
    return (head + f"only {'%wb_timeit' if m2_in_m else 'timeit'}'s median lies within the other's quartiles, not "
            f"the reverse ({ratio:.2f}× apart). Two medians carry no interval, so whether the two agree is not "
            "settled either way (quick() below judges with paired rounds).")


print(agreement(m, m2))
"""),
    md("""
## Three softmaxes, under ten lines

`setup(n)` makes the arguments for size `n` (here an `n x 1024` float32 matrix); it is called again for
every input set, so no callable can replay a cached answer. `bytes` (a function of `n`) turns times into
GB/s: a softmax reads its input once and writes its output once.

In the table below, `~` before a time marks a noisy cell, and its notes say why.
"""),
    code("""
res = workbench.quick(
    {"numpy": lambda x: (e := np.exp(x - x.max(1, keepdims=True))) / e.sum(1, keepdims=True),
     "torch": lambda x: torch.softmax(torch.from_numpy(x), dim=1),
     "numpy-naive": lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)},
    setup=lambda n: np.random.rand(n, 1024).astype(np.float32), sizes=SIZES,
    bytes=lambda n: 2 * 4 * 1024 * n, name="softmax three ways", budget_s=BUDGET_S, progress=False)
res
"""),
    code("""
table = res.summary()[["variant", "size", "status", "median ± IQR", "GB/s", "max error", "notes"]]
# GB/s to three significant figures, trailing zeros kept ("6.00" beside "6.48", not "6"); blank where the table
# prints none (a disturbed cell)
table["GB/s"] = [f"{g:#.3g}".rstrip(".") if shown else "" for g, shown in zip(res.df["gbps"], table["GB/s"] != "",
                                                                              strict=True)]
display(table)
if table["notes"].str.contains("set aside").any():   # said only where the table carries such a note
    print('A note "round N set aside" means that round was left out of the median of its cell: before each round the '
          "workbench times a fixed probe, and a round taken while the probe ran slow, and slower itself, is not "
          "counted (the note gives both ratios: the probe against its best, the cell against its rounds at speed; "
          "docs/statistics.md).")
"""),
    md("""
Every output was compared with the first callable's (`numpy`) within a float32 tolerance, before timing
and again after it on every rotated input set. The verdicts below are the package's paired ones: within
each round the two callables run in alternating blocks where a round's visit is long enough for them, else
the rounds themselves are paired; the line after the verdicts names each one's basis. "faster" only where its
interval excludes no change and the difference beats the noise floor.

These rows are not the `timeit` above: `quick` times `torch.softmax(torch.from_numpy(x))` on a fresh
`n x 1024` matrix from numpy, in the numpy backend's worker process, at other sizes. The cell below prints
the threads each used and sets quick()'s largest torch row beside the 4096-row `timeit`, per row.
"""),
    code("""
def paired_interval(v, other):
    # the paired interval in the direction its estimate is said in: a speed-up with the speed-up's interval, a
    # "took ... the time" with the interval of the time ratio (the speed-up's would read as the other direction)
    lo, hi = float(v["ci_low"]), float(v["ci_high"])
    if float(v["speedup"]) >= 1:
        return f"paired {interval_name(v)} {interval_text(lo, hi)}, as {other}'s speed-up"
    return f"paired {interval_name(v)}: {other} took {interval_text(1 / hi, 1 / lo)} the time"


def disturbed_cells_note(df, v, variants):
    # a pair whose cells the summary table reads "disturbed" (quartiles past ±50% of the median): said, so that a
    # settled paired figure does not stand unexplained beside them. The paired blocks cancel what the rounds share;
    # their interval carries the rest
    rows = df[(df["size_label"] == v["size_label"]) & df["variant"].isin(variants) & (df["status"] == "ok")]
    wide = [r["variant"] for _, r in rows.iterrows() if spread_disturbed(r["iqr_s"], r["median_s"])]
    if not wide or is_disturbed(float(v["floor"])):
        return ""
    return (f"the table above reads {' and '.join(wide)} disturbed at this size: the samples spread past "
            f"±{DISTURBED_FLOOR:.0%} of the median, which is not a finding there; this comparison rests on the "
            "paired blocks, whose interval carries that spread")


import functools


def per_row_note(df, m, rows) -> str:
    # quick()'s largest torch row beside the timeit, each per row of 1024 floats: the gap the printed figures show,
    # said, with what differs between the two; which difference makes it, nothing here measures
    ok = df[(df["variant"] == "torch") & (df["status"] == "ok")]
    ok = ok[[not spread_disturbed(i, t) for i, t in zip(ok["iqr_s"], ok["median_s"], strict=True)]]
    if ok.empty:
        return "quick()'s torch rows read disturbed, so none is set beside the timeit."
    r = ok.loc[ok["size"].astype(int).idxmax()]
    quick_row, timeit_row = float(r["median_s"]) / int(r["size"]), m.median_s / rows
    ratio = max(quick_row, timeit_row) / min(quick_row, timeit_row)
    t = functools.partial(fmt_seconds, zeros=True)   # three significant figures, trailing zeros kept
    return (f"quick()'s torch row at {r['size_label']} took {t(r['median_s'])}, {t(quick_row)} "
            f"a row; the timeit above took {t(m.median_s)} for {rows} rows, {t(timeit_row)} a "
            f"row: " + (f"within {ratio - 1:.0%} of each other a row" if ratio < 1.1 else
                        f"{'the timeit took' if timeit_row > quick_row else 'quick() took'} {ratio:.1f}× "
                        f"{'quick()' if timeit_row > quick_row else 'the timeit'}'s time a row")
            + f", at {int(r['size'])} rows against {rows}"
            + (" (the timeit read disturbed, so its median is its only figure)" if m.disturbed else "") + "."
            + ("" if ratio < 1.1 else " The two timed different calls in different processes (a fresh numpy matrix "
               "each input set in numpy's worker; one torch tensor here), with the threads printed above and in the "
               "timeit's line; which of these makes the gap, these rows do not measure."))


# the threads the torch callable ran on in the worker, beside the timeit's (its repr above names them)
print("quick()'s torch rows ran with threads:", "; ".join(sorted(set(str(t) for t in res.df.loc[
    res.df["variant"] == "torch", "threads"].dropna()))) or "not recorded")
print(per_row_note(res.df, m, x.shape[0]))
parted = False   # whether any size's paired figure and its medians' ratio part (said after the verdicts, if so)
verdicts = NoteBlock()   # each verdict's head on its line; reasons, where a verdict has any, as numbered notes
bases = []   # each verdict's basis: paired blocks, or paired rounds where a visit was too short for blocks
for other in ("torch", "numpy-naive"):
    for _, v in pair_verdicts(res.df, "numpy", other, "numpy").iterrows():
        # the rerun that applies to a quick() comparison: its own rounds= on an idle machine, a quieter machine
        # where the rows saw a busy one (more rounds there add its disturbance too)
        hint = BUSY_RERUN_HINT if v.get("busy") else "rerun it with more rounds (workbench.quick(..., rounds=10))"
        claim = verdict_claim(v, "numpy", other, rerun=hint)
        head, sentence = claim.head, claim.text()
        # the paired figure's interval, which the disagreement sentence leaves out; never a disturbed one's (past
        # ±50% no interval is printed: the sentence says it was disturbed)
        if medians_disagree(v) and not is_disturbed(float(v["floor"])):
            parted = True
            head += f" ({paired_interval(v, other)})"
            sentence += f" ({paired_interval(v, other)})"
        cells = disturbed_cells_note(res.df, v, ["numpy", other])
        sentence += f" ({cells})" if cells else ""
        check_claim(v, sentence)   # the whole sentence, and the head printed on its line
        check_claim(v, head)
        verdicts.add(f"{v['size_label']:>8}", Claim(head, (*claim.reasons, *((cells,) if cells else ()))))
        bases.append(f"{other} at {v['size_label']}: {v.get('basis') or 'paired estimate'}")
print(verdicts)
print("Basis of each verdict:", "; ".join(bases))
if parted:   # the rule behind those lines, said only where one of them applies it
    print("Where a size's paired figure and the ratio of the two cells' own medians (the table above) part by more "
          "than the interval, its line says so and settles no size: it names a direction only where both lie on "
          "the same side past the ±5% band.")
from workbench.report.busy_caveat import shared_machine_advice

if shared_machine_advice(res.df):   # the floors above are this run's: say when it shared the machine, and what to do
    print(f"({shared_machine_advice(res.df)})")
# what numpy-naive does differently, said without a cause the timings cannot separate (its verdicts are above)
print("numpy-naive skips the row maximum and its subtraction but evaluates np.exp(x) twice; its verdicts above "
      "time the two together and do not separate them. The next section shows what skipping the maximum risks: "
      "overflow on large inputs.")
"""),
    code("""
from matplotlib.ticker import FuncFormatter, NullFormatter


def figure_note(df, top) -> str:
    # what the figure below can show on its axis (0 to top GB/s): each callable's range of GB/s, and numpy-naive's
    # gap to numpy as a share of the axis, so a gap too small to see there is said to be read from the verdicts.
    # The cells the table reads disturbed (no GB/s printed there) are left out, as the table leaves them
    ok = df[df["status"] == "ok"]
    ok = ok[[not spread_disturbed(i, t) for i, t in zip(ok["iqr_s"], ok["median_s"], strict=True)]]
    span = {v: (g.min(), g.max()) for v, g in ok.groupby("variant", sort=False)["gbps"]}
    g3 = lambda x: f"{x:#.3g}".rstrip(".")   # as the table's GB/s: three significant figures, zeros kept
    said = "; ".join(f"{v} {g3(lo)}–{g3(hi)}" if g3(lo) != g3(hi) else f"{v} {g3(lo)}"
                     for v, (lo, hi) in span.items())
    a, b = (ok[ok["variant"] == v].set_index("size")["gbps"] for v in ("numpy", "numpy-naive"))
    gap = (a - b).abs().dropna()
    text = f"The figure below plots each row's GB/s on an axis from 0 to {top:.0f} GB/s (the table's {said} GB/s)."
    if gap.empty:
        return text
    seen = ("too small to see there, so read numpy-naive against numpy in its verdicts above" if gap.max() < 0.05 * top
            else "visible there")
    return (text + f" numpy-naive lies {gap.min():.2f}–{gap.max():.2f} GB/s from numpy, "
            f"{gap.max() / top:.0%} of the axis at most: {seen}.")


fig = res.plot("gbps")
print(figure_note(res.df, fig.axes[0].get_ylim()[1]))
for ax in fig.axes:   # one style for the size ticks ("2,048", not "2¹¹" beside "512")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos: f"{x:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
    for t in legend.get_texts():   # as the other entries and the text say it: torch's callable in numpy's worker
        t.set_text(t.get_text().replace("torch (torch, numpy inputs)", "torch @ numpy (torch on numpy inputs)"))
fig
""", "figure"),
    md("""
## A wrong answer is a row, not a number

`numpy-naive` skips the subtraction of the row maximum. On inputs in [0, 1) nobody can tell; with logits
of a few hundred, `exp` overflows float32 and the check catches it: the row is `incorrect` and is not
timed (the time of a wrong answer is not a result). The overflow warnings printed below are
numpy-naive's: both callables run in the `numpy` backend's worker process, and a worker's output is
labelled with its backend (`[worker numpy]`), not with the callable.
"""),
    code("""
big = workbench.quick(
    {"numpy": lambda x: (e := np.exp(x - x.max(1, keepdims=True))) / e.sum(1, keepdims=True),
     "numpy-naive": lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)},
    setup=lambda n: (300 * np.random.rand(n, 1024)).astype(np.float32), sizes=SIZES[:1],
    name="softmax large logits", budget_s=BUDGET_S, progress=False)
statuses = dict(zip(big.df["variant"], big.df["status"]))
print(statuses)
print(big.failures()[["variant", "status", "reason"]].to_string(index=False))
assert statuses == {"numpy": "ok", "numpy-naive": "incorrect"}
"""),
    md("""
## From an experiment to a catalog kernel

When a comparison is worth keeping, `promote()` writes it as a catalog folder — `spec.py` and a variants
file — that `workbench.load_catalog(path)` loads. What an ad-hoc comparison cannot know is marked `TODO`:
the float64 reference (until it is written, `workbench verify` reports every variant as an error saying
so) and the tolerances.
"""),
    code("""
import tempfile

folder = res.promote(tempfile.mkdtemp())
print(folder)
spec_lines = (folder / "spec.py").read_text().splitlines()
print("\\n".join(spec_lines[:26]))   # its first lines, whole: the file goes on with the TODOs to fill in
print(f"... ({len(spec_lines) - 26} more lines in {folder / 'spec.py'})")
"""),
    code("""
workbench.load_catalog(folder)
checked = workbench.verify(kernels=folder.name, backends="numpy")
for r in checked:   # each variant's status with its message, as `workbench verify` prints them
    print(f"{r.variant}: {r.status}: {r.message}")
assert {r.status for r in checked} == {"error"} and "no float64 reference yet" in checked[0].message
"""),
]

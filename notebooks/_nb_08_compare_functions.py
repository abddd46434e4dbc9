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
from workbench.report.claims import (check_claim, pair_verdicts, reading, settled_direction, sizes_said,
                                     verdict_claim)
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
`q3_s`, `samples_s`, `noisy`, `timer_kind`).
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
copy of the first: the cell after it says whether the two agree. `%wb_quick -s setup -n sizes {"a": f, "b": g}`
runs `workbench.quick` and shows its summary.
"""),
    code("""
%load_ext workbench.magics
m2 = %wb_timeit -o torch.softmax(x, dim=1)
"""),
    code("""
# two measurements of one call: do they agree? (each median against the other's quartiles)
# a disturbed measurement agrees with anything: then both are said as disturbed, not as agreeing. One rule, the
# one its line above printed (Measurement.disturbed: the cell rule, CELL_RULE), in the same words
from workbench.judge.disturbed import CELL_RULE

m2_in_m, m_in_m2 = m.q1_s <= m2.median_s <= m.q3_s, m2.q1_s <= m.median_s <= m2.q3_s
apart = not (m2_in_m or m_in_m2)
# the ratio of the medians as printed (three significant figures), so it follows from the two figures a reader sees
shown = [float(f"{t.median_s * 1e3:.3g}") for t in (m, m2)]
ratio = max(shown) / min(shown)
shaky = [name for name, t in (("timeit", m), ("%wb_timeit", m2)) if t.disturbed]
# one thing per sentence (issue 39: this line ran to 87 words)
print(f"timeit {shown[0]:.3g} ms, %wb_timeit {shown[1]:.3g} ms median: "
      + (f"{' and '.join(shaky)} {'were' if len(shaky) > 1 else 'was'} disturbed ({CELL_RULE}), so whether they "
         "agree cannot be read from them. Rerun on a quieter machine."
         if shaky else
         f"they differ {ratio:.2f}×, beyond each other's quartiles. The quartiles measure the spread within one "
         "measurement, not between two taken seconds apart. Two measurements cannot say which of them is "
         "nearer this call's usual time (the lines below say whether either was noisy, and why). This is why "
         "quick() below judges with paired rounds, not with two medians."
         if apart else "each median lies within the other's quartiles." if m2_in_m and m_in_m2 else
         f"only {'%wb_timeit' if m2_in_m else 'timeit'}'s median lies within the other's quartiles, not the reverse "
         f"({ratio:.2f}× apart). Two medians carry no interval, so whether the two measurements agree is not "
         "settled either way (quick() below judges with paired rounds)."))
# each one's own noise flag, side by side, with the machine it recorded: the flag is the library's noisy mark (rounds
# spread past 10%, or other processes past 25% of the CPU), so it follows the share printed beside it
for name, t in (("timeit", m), ("%wb_timeit", m2)):
    seen = (f"other processes {t.other_cpu_share:.0%} of the CPU" if t.other_cpu_share is not None
            else "other processes' CPU share not read") + (f", load {t.load_avg_1m:.1f}" if t.load_avg_1m else "")
    load = f"; load {t.load_avg_1m:.1f}" if t.load_avg_1m else ""
    print(f"  {name}: " + (f"noisy ({t.noise_note}{load})" if t.noisy else f"not noisy ({seen})"))
"""),
    md("""
## Three softmaxes, under ten lines

`setup(n)` makes the arguments for size `n` (here an `n x 1024` float32 matrix); it is called again for
every input set, so no callable can replay a cached answer. `bytes` (a function of `n`) turns times into
GB/s: a softmax reads its input once and writes its output once.
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
res.summary()[["variant", "size", "status", "median ± IQR", "GB/s", "max error", "notes"]]
"""),
    md("""
Every output was compared with the first callable's (`numpy`) within a float32 tolerance, before timing
and again after it on every rotated input set. The verdicts below are the package's paired ones: within
each round the two callables run in alternating blocks, and the speed-up is judged from those pairs;
"faster" only where its interval excludes no change and the difference beats the noise floor. Where the
paired figure and the ratio of the two cells' own medians (the table above) part by more than the interval,
the sentence says so and settles no size: where both estimates lie on the same side past the ±5% band, it
names that direction (and gives both figures), a direction only; otherwise it settles nothing.

These rows are not the `timeit` above: `quick` times `torch.softmax(torch.from_numpy(x))` on a fresh
`n x 1024` matrix from numpy, in the numpy backend's worker process, at other sizes, so its torch row at 2048
rows and the 4096-row `timeit` are two measurements of two calls in two processes. The threads each used are
printed below; why the 2048-row time is not half the 4096-row one, these rows do not measure.
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


# the threads the torch callable ran on in the worker, beside the timeit's (its repr above names them)
print("quick()'s torch rows ran with threads:", "; ".join(sorted(set(str(t) for t in res.df.loc[
    res.df["variant"] == "torch", "threads"].dropna()))) or "not recorded")
naive = {}   # numpy-naive's reading at each size it was measured at (sizes_said accounts for every one)
verdicts = NoteBlock()   # each verdict's head on its line, each reason once in the numbered notes under them
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
            head += f" ({paired_interval(v, other)})"
            sentence += f" ({paired_interval(v, other)})"
        cells = disturbed_cells_note(res.df, v, ["numpy", other])
        sentence += f" ({cells})" if cells else ""
        check_claim(v, sentence)   # the whole sentence, and the head printed on its line
        check_claim(v, head)
        verdicts.add(f"{v['size_label']:>8}", Claim(head, (*claim.reasons, *((cells,) if cells else ()))))
        # faster by a settled verdict, or in direction only where the size is unsettled (settled_direction):
        # the summary keeps the two apart, as the sentences do
        direction = settled_direction(v)
        if other == "numpy-naive" and reading(v) in ("faster", "slower", "same"):
            naive.setdefault("the same" if reading(v) == "same" else reading(v), []).append(v["size_label"])
        elif other == "numpy-naive" and direction:
            naive.setdefault(f"{direction[0]} (in direction only: size not settled)", []).append(v["size_label"])
print(verdicts)
from workbench.report.busy_caveat import shared_machine_advice

if shared_machine_advice(res.df):   # the floors above are this run's: say when it shared the machine, and what to do
    print(f"({shared_machine_advice(res.df)})")
# what numpy-naive does differently, said without a cause the timings cannot separate: it skips one pass
# (the row maximum and its subtraction) and evaluates np.exp(x) twice
where = sizes_said(naive, list(dict.fromkeys(res.df["size_label"])))   # every size measured, each said once
print("numpy-naive skips the row maximum and its subtraction but evaluates np.exp(x) twice. These timings "
      "do not separate the two effects"
      + (f" (numpy-naive against numpy: {where})" if where else "")
      + ". The next section shows what skipping the maximum risks: overflow on large inputs.")
"""),
    code("""
from matplotlib.ticker import FuncFormatter, NullFormatter

fig = res.plot("gbps")
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
print({r.variant: r.status for r in checked})
assert {r.status for r in checked} == {"error"} and "no float64 reference yet" in checked[0].message
"""),
]

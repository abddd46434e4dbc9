"""Tutorial: where an LLM decode step spends its time — attention against the KV cache, and the MLP block's
launches in eager, graph and fused modes, with the execution cache's statistics."""

from _cells import code, md, params

CELLS = [
    md("""
# Where decode time goes

A decode step adds one token per sequence. This notebook measures two parts of each decoder layer (the rest
of a layer, the q/k/v/o projections, two norms and rope, is not measured here, so nothing below says which
parts dominate a whole step):

1. **attention against the KV cache**: one query row per head reads every cached key and value, so its
   cost grows with the cache length *L*;
2. **the MLP block** (rmsnorm → gate/up projections → SwiGLU → down projection + residual): five kernels,
   three of which multiply a single row by a weight matrix (gate, up, down), reading every weight once per
   token for two FLOPs each. Whether that reading is bound by memory depends on where the weights live and
   how fast each runtime reads them: section 2 prints their size against this machine's caches and, where
   they do not fit in the last-level cache, sets each runtime's block against the host's copy bandwidth
   (where they fit, as in a `SMALL` run, it says so and sets none). What the rest of a block's time goes to (per-call
   setup, launches) these rows do not break down; `graph` and `fused` are meant to remove some of it, and
   section 2 says whether that showed beyond the noise, and where either was slower than eager beyond it.

This notebook measures both at the shapes of a real model (Qwen2.5-0.5B: hidden 896, intermediate 4864,
14 query heads sharing 2 KV heads of width 64, a context of 32,768 tokens), on the CPU backends this machine
has, for one layer and one sequence: both parts repeat once per layer (24 in this model), so their shares of a
step are the shares of one layer. The KV-cache lengths: the quick run measures 256 and 4,096 tokens and one
length taken from this machine's caches, the first whose cache is twice the last-level cache, so that it
streams from DRAM (65,536 tokens on a 32 MiB last-level cache). A `SMALL` run (the tests') measures 256, 1,024
and 4,096 instead, none taken from the caches; section 1 prints the lengths each run measured.
Where that length is past the model's 32,768-token context it is a memory-sizing choice, not a length this
model runs at: the per-token shapes are the model's, the length is this machine's, and the notebook says so
beside it. `FULL = True` measures 512, 2,048, 8,192 and 32,768 tokens and the same DRAM length instead, with
more rounds and torch.compile. It then compares the block's three execution modes — `eager`, `graph`
(recorded once per shape, replayed) and `fused` — and reads the execution cache's statistics that every such
row carries.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: the MLP in 5 rounds with torch.compile, KV lengths 512, 2048, 8192, 32768 and the
                   # DRAM length (several minutes); False: 256, 4096 and the DRAM length (the first length
                   # whose cache is twice the last-level cache: 65536 on a 32 MiB one, past the model's context)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.report.claims import (busy_text, check_claim, disturbance_text,
                                     host_bandwidth, json_list, machine_busy, may_state_cause, own_rounds_share,
                                     pair_medians, pair_verdicts, reading, round_rates, verdict_claim)
from workbench.report.claim_notes import Claim, NoteBlock, clauses
from workbench.report.claims_cause import busy_share
from workbench.report.busy_caveat import share_words
from workbench.report.claims import PHRASES, CELL_CROSSED, DISAGREE, MEDIANS_TOLERANCE, mark_busy, medians_disagree
from workbench.report.claims_rows import figures_at_least, median_rounds, printed_ratio, quartiles_wide
from workbench.report.total_band import band_readable, total_band
from workbench.report.beyond_noise import (NOISY_ASIDE, NOT_SETTLED, UNDECIDED, beyond_noise,
                                          FEW_ROUNDS, direction_said, disturbed_why, label_word,
                                          lowest_text)
from workbench.judge.verdicts import rounds_could

import json
import re

from workbench.core.conditions import BUSY_CPU_SHARE

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from workbench.core.datasets import llm_shapes
from workbench.core.units import fmt_bytes, fmt_seconds, fmt_tick_time
from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.verdicts import DISTURBED_FLOOR, is_disturbed, span_disturbed, spread_disturbed
from workbench.report.plots.lines import quartile_span
from workbench.report.plots.series import (disturbed_legend, disturbed_mask, mark_disturbed, mark_modes, mark_noisy,
                                           mode_medians, modes_legend, noisy_legend, noisy_mask)
from workbench.report.marked_times import marked_times
from workbench.judge.stats import bimodal_split
from workbench.report.tables import NOISY_MARK



def marks_said(figure):
    # what the tables' marks mean, printed above each table that carries them (as the library's tables mark cells);
    # how the figure draws them only where a figure follows (section 2 has none: 10 said "hollow in the figure" there)
    drawn = lambda how: f", {how} in the figure" if figure else ""   # noqa: E731
    return (f"(In the table below, '{NOISY_MARK} ' before a time marks a noisy cell: its rounds spread past 10%, or "
            f"the machine was busy while it ran{drawn('hollow')}. 'two modes: A / B' marks a cell whose rounds fell "
            f"in two modes{drawn('a bar between them')}. ', disturbed' after a time marks a cell whose quartiles lie "
            f"half its median or more apart{drawn('an x')}. Neither of the last two has a median to read: no rate "
            "(GB/s) and no ratio is taken from it.)")


# claims_cause.disturbance_text's busy reason (claim_notes prints it "the machine was busy (load up to ...)"), left to
# each section's closing line; "not busy" reasons stay, as no closing line speaks of an idle machine
BUSY_NOTE = ("(?:the machine was (?:not )?busy [(]|on a machine that was not busy, with )?load up to [0-9.]+, other "
             "processes up to [0-9]+% of the CPU[)]?")


def machine_said(rows, section):
    # how busy the machine was, said once a section, with the one figure and the rows it is the highest of (the
    # verdict notes leave it out, BUSY_NOTE: 10 printed 74%, 72% and "load up to 3.5" in notes and closing lines)
    if busy_text(rows):
        return f"This run shared the machine: {busy_text(rows)} (the highest of {section}'s {len(rows)} cells)."
    share = busy_share(rows)
    return ("" if share is None else f"The machine was not busy: other processes used up to {share_words(share)} "
            f"while these cells ran (the highest of {section}'s {len(rows)} cells).")


def two_figures(x):
    # a ratio of single values (a recording over a median) at two significant figures: "5.5x", "59x", "2,300x"
    r = float(f"{x:.2g}")
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"


def median_unread(g):
    # the cells whose median the tables do not print as one: disturbed (quartiles half the median or more apart)
    # or with rounds in two modes; no ratio, rate or baseline is taken from them
    two = np.array([x is not None for x in mode_medians(g)], dtype=bool)
    return np.asarray(disturbed_mask(g), dtype=bool) | two


def readable_lowest(d):
    # each length's baseline: the lowest median among the cells whose median is read (median_unread), so clean
    # pairs are judged; the lowest of all only where every cell at that length is unread. One row per kv_len.
    out = []
    for L in sorted(set(d["kv_len"])):
        at = d[d["kv_len"] == L]
        read = at[~median_unread(at)]
        out.append((read if len(read) else at).nsmallest(1, "median_s"))
    return pd.concat(out).set_index("kv_len")


def unread_why(row):
    one = pd.DataFrame([dict(row)])
    return "in two modes" if mode_medians(one)[0] is not None else "disturbed"


def figure_said(sentence, sides, figure):
    # claims.CELL_CROSSED says "(the figure draws it as an x)": true of a disturbed cell in section 1's figure, not
    # of a two-mode one (drawn as its two modes) nor where no figure follows (section 2)
    bare = CELL_CROSSED.split(" (")[0]
    if CELL_CROSSED not in sentence:
        return sentence
    if not figure:
        return sentence.replace(CELL_CROSSED, bare)
    hit = sides[np.asarray(disturbed_mask(sides), dtype=bool)]
    two = [x is not None for x in mode_medians(hit)]
    if two and all(two):
        return sentence.replace(CELL_CROSSED, bare + " (the figure draws its two modes, a bar between them)")
    return sentence.replace(CELL_CROSSED, bare + " (the figure draws it as an x, or as its two modes where its "
                                                 "rounds fell in two)") if any(two) else sentence

tutorial.begin(FULL)


def with_figures(v, sentence, rows=None):
    # a settled faster/slower sentence with the two figures a reader reconciles it by: the paired interval and the
    # ratio of the two cells' medians as the table beside it prints them (each cell's median over all its samples,
    # from ``rows``, the pair's rows, or the pair's table_median_a/_b), both as the sentence reads ("took N× its
    # time" for a slower pair); nothing added where the interval is too wide to inform (±50%). 10 printed the paired
    # rounds' 23.8 ms / 2.9 ms, 8.2×, beside a table of 23.8 ms / 2.75 ms, 8.65×, having promised the table's
    lo, hi = float(v["ci_low"]), float(v["ci_high"])
    ta, tb = pair_medians(v, rows) if rows is not None else (float("nan"), float("nan"))
    if not np.isfinite([ta, tb]).all():
        ta, tb = float(v.get("table_median_a", float("nan"))), float(v.get("table_median_b", float("nan")))
    which = "the table's medians"
    if not np.isfinite([ta, tb]).all():   # no table beside it: the medians the verdict divides, named as such
        ta, tb, which = float(v["median_a"]), float(v["median_b"]), "the paired rounds' medians"
    med = ta / tb
    # a side the table prints in two modes, or disturbed, has no median to quote: only the paired interval is given
    # (10 quoted "the table's medians 31.9 µs / 23.9 µs" of a cell the table printed as 31.9 µs / 49.1 µs modes)
    unread = rows is not None and len(rows) > 0 and bool(median_unread(rows).any())
    if (reading(v) == "inconclusive" and not is_disturbed(float(v["floor"])) and np.isfinite(med) and med > 0
            and not unread
            and " noise floor" in sentence and "the cells' own medians" not in sentence):
        # an unsettled estimate is the paired rounds'; the table's medians beside it, and their ratio at their own
        # three figures, in the estimate's direction (10 printed "torch-sdpa measured 1.1× slower" beside a table of
        # 42.9 µs / 37.2 µs, 1.15×, and nothing said which figure the 1.1 was)
        slower = float(v["speedup"]) < 1
        slow_fast = (fmt_seconds(tb), fmt_seconds(ta)) if slower else (fmt_seconds(ta), fmt_seconds(tb))
        # the ratio of the medians as printed, so a reader's division of the table gives the same figure
        ratio = printed_ratio(tb, ta) if slower else printed_ratio(ta, tb)
        return sentence.replace(" noise floor", f" noise floor (the paired rounds' estimate; {which} {slow_fast[0]} / "
                                f"{slow_fast[1]}, {figures_at_least(f'{ratio:.2g}×', ratio, 3)})", 1)
    if (reading(v) not in ("faster", "slower") or is_disturbed(float(v["floor"]))
            or not (np.isfinite([lo, hi, med]).all() and lo > 0) or is_disturbed((hi / lo) ** 0.5 - 1)):
        return sentence
    if reading(v) == "slower":
        lo, hi, med = 1 / hi, 1 / lo, 1 / med
    x = lambda r: f"{r:.3f}" if f"{r:.2f}" == "1.00" else f"{r:.2f}"  # noqa: E731 - a bound near 1 keeps its digit
    # the interval and the medians said once, in the parenthesis below (its name may carry its coverage: "(97.5%
    # interval ...)"; 10 printed both, "(97.5% interval 1.4×-2.2×) (paired, interval 1.48-2.14×; ...)")
    sentence = re.split(r" [(](?:[0-9.]+% )?interval ", sentence)[0]
    slow_fast = (fmt_seconds(tb), fmt_seconds(ta)) if reading(v) == "slower" else (fmt_seconds(ta), fmt_seconds(tb))
    shown = printed_ratio(tb, ta) if reading(v) == "slower" else printed_ratio(ta, tb)   # as the medians print
    figures = (f"paired, interval {x(lo)}-{x(hi)}×" if unread else
               f"paired, interval {x(lo)}-{x(hi)}×; {which} {slow_fast[0]} / {slow_fast[1]}, "
               # never coarser than the three-figure medians it divides (10: "8×" for 7.5, "8.7×" for 8.65)
               f"{figures_at_least('', shown, 3)}")   # three figures, as the medians print (10: "1.274×")
    if size_unsettled(v):   # e.g. 1.004-2.00×: who was faster is settled, by how much is not
        return f"{direction_only(v, sentence)} ({figures})"
    return f"{sentence} ({figures})"


def noted_claim(v, sides, base, other, figure=False, kernel="mlp_block"):
    # a verdict as its head (with the figures a reader reconciles it by) and its reasons, for a NoteBlock that says
    # each shared reason once under the lines; both the whole sentence and the head pass check_claim
    claim = verdict_claim(v, base, other, disturbed_by=disturbance_text(sides), rerun=rerun_advice(sides, kernel))
    # how busy the machine was is said once, in each section's closing line (the highest over its cells): a note
    # under each verdict list gave a figure of its own (10 printed 74%, 72% and "load up to 3.5" in one notebook)
    claim = Claim(with_figures(v, figure_said(claim.head, sides, figure), sides),
                  tuple(figure_said(r, sides, figure) for r in clauses(*claim.reasons)
                        if not re.fullmatch(BUSY_NOTE, r)),
                  with_figures(v, figure_said(claim.text(), sides, figure), sides))
    check_claim(v, claim.text())
    check_claim(v, claim.head)
    return both_modes(v, sides, claim, base, other)


def both_modes(v, sides, claim, base, other):
    # a bound ("took at least 4.0x its time") must hold against both modes of a side whose rounds fell in two, or it
    # is not printed: 10 printed "numba-eager took at least 4.0x its time" of a numpy-eager in two modes, 65.1 us
    # and 117 us, against 417 us (3.6x the slower mode). The direction stays where every mode lies on its side.
    m_ = re.search(r"(?:ran|took) at least [0-9.,]+× (?:faster than|its time)", claim.head)
    rows = sides.to_dict("records")
    modes = dict(zip([r["variant"] for r in rows], mode_medians(sides)))
    two = [x for x, mm in modes.items() if mm is not None]
    if not m_ or not two:
        return claim
    bound = float(re.search(r"[0-9.,]+", m_.group(0).split("least ")[1]).group(0).replace(",", ""))
    times = {r["variant"]: list(modes[r["variant"]] or (float(r["median_s"]),)) for r in rows}
    mine = [x for x in times if x == v["variant"]]
    theirs = [x for x in times if x != v["variant"]]
    if len(mine) != 1 or len(theirs) != 1:
        return claim
    faster = "faster than" in m_.group(0)
    # each side's every mode against the other's: other's time over base's where base was faster, else the reverse
    ratios = [(b_ / o_ if faster else o_ / b_) for o_ in times[mine[0]] for b_ in times[theirs[0]]]
    if min(ratios) >= bound:
        return claim
    cell = " and ".join(two)
    if min(ratios) > 1:
        head = (f"{other} ran faster than {base} against both of {cell}'s modes, by how much is unknown" if faster
                else f"{base} was faster: {other} took longer against both of {cell}'s modes, by how much is unknown")
        check_claim(v, head, dict(PHRASES, faster=" faster than "))
    else:
        head = (f"no direction holds between {other} and {base}: {cell}'s two modes lie on both sides of the other's "
                "time")
    why = f"{cell}'s rounds fell in two modes, and the interval's bound holds against only one of them"
    return Claim(head, (why, *claim.reasons), claim.text())


def probes_said(rows, probe):
    # how many probes host_bandwidth's best is of: one copy is timed before each round past the cache and shared by
    # every cell measured in that round, so the cells carry copies of it (10 printed "best of 21 probes", each
    # 11.6 GB/s: seven cells' copies of the rounds' probes); counted once per round, the copies said as such
    cell_rounds = sum(len(json_list(t)) for t in rows.get("round_bandwidth_gbs", pd.Series(dtype=object)).dropna())
    # (a re-reader counted the divisors printed beside the rounds and found the best probe in most rounds: each
    # round is set against its own probe only where the cell ran 5% slower in it, judge/dips.felt_dips; say so)
    return (f"best of {probe[1]} distinct probes: one is timed before each round and shared by every cell past the "
            f"cache in that round, so the {len(rows)} cells below carry {cell_rounds} copies of them; a round is set "
            "against its own probe only where the cell ran at least 5% slower in it than in its other rounds (the "
            "host's dip was felt), against the best probe of its rounds otherwise")


def size_unsettled(v):
    # a settled verdict whose interval spans more than DISTURBED_FLOOR end to end (the bound claims.settled_direction
    # holds two estimates to): its direction is a finding, its size is not
    lo, hi = float(v["ci_low"]), float(v["ci_high"])
    return reading(v) in ("faster", "slower") and lo > 0 and span_disturbed(lo, hi)


def direction_only(v, sentence):
    # "X ran 1.4× faster than Y" -> "X ran at least 1.004× faster than Y: the direction is settled, its size is not"
    lo, hi = float(v["ci_low"]), float(v["ci_high"])
    b = lo if reading(v) == "faster" else 1 / hi
    bound = f"{b:.3f}" if f"{b:.2f}" == "1.00" else f"{b:.2f}"   # a bound near 1 keeps its third digit
    head, _, tail = sentence.partition(" ran " if reading(v) == "faster" else " took ")
    rest = tail.split("× ", 1)[1] if "× " in tail else tail
    verb = " ran " if reading(v) == "faster" else " took "
    return f"{head}{verb}at least {bound}× {rest}: the direction is settled, its size is not"


def rerun_advice(rows, kernel="mlp_block"):
    # what would settle a comparison, from what its rows recorded of the machine: on a busy one a quieter machine,
    # not more rounds (docs/statistics.md, "Where the power goes": at load 10-11 nine rounds gave floors of ±25-28%
    # against ±11-12% with three); on an idle one more rounds
    if machine_busy(rows):   # by the threshold the rows' own noisy mark uses; the share itself is its own note
        return (f"rerun it on a quieter machine (other processes took past the {BUSY_CPU_SHARE:.0%} of the CPU at "
                "which a row is marked busy): more rounds on a busy machine add its disturbance too")
    # no "workbench bench --kernels K ... --rounds 10": a command printed must be copyable, and these cells' LLM
    # shapes are the notebook's own, not flags; the rounds are set where this notebook calls workbench.benchmark
    return "rerun it with more rounds (FULL = True in the parameters cell measures 5 rounds a cell, not 3)"


def share_band(x):
    return "above" if x > 1 else "near" if x >= 0.7 else "part" if x >= 0.4 else "low"


def rounds_across_bands(row):
    # the per-round shares (GB/s over the probe each round is set against) where they fall in more than one band:
    # then no band is read from their median (10 gave "70-100%" to rounds at 33%, 83% and 259%); [] otherwise
    shares = [g / p for g, p in round_rates(row)]
    return sorted(shares) if len({share_band(x) for x in shares}) > 1 else []


def stream_share_text(share, what, across=(), busy=None):
    # what a share of the stream rate says, and only that: reading the compulsory bytes once at the host's copy
    # rate would take that share of the time (the rows count compulsory bytes only, so re-reads are not in it).
    # ``across``: the per-round shares where they fall in more than one band (rounds_across_bands): no band said.
    # ``busy`` (machine_busy of the rows): the advice follows it (10 advised more rounds on a run it said shared the
    # machine, where more rounds add its disturbance)
    said = f"reading {what} once at the stream rate would take {share:.0%} of its time"
    if across:
        return (said + f" by the median of its rounds, but its rounds read {across[0]:.0%} to {across[-1]:.0%}, in "
                "more than one band: no band is read from them (the rounds, not the median, decide the band: "
                + rounds_could(busy, "show where most of them fall") + ")")
    if share > 1:   # the kernel read faster than the reference rate: the rate is no ceiling for it here
        return said + (" (above 100%: it moved its bytes faster than the probe's rate, so part of them came from the "
                       "cache, or the probe read low; no share of its time is read from it)")
    return said + (" (70-100%: all or nearly all of it)" if share >= 0.7 else
                   " (40-70%: part of it)" if share >= 0.4 else " (under 40%: most of its time goes elsewhere)")


def probe_spread(rows):
    # the probes the rows took before their rounds: (median, lowest, highest) GB/s, None where they took none
    probes = [float(g) for r in rows.to_dict("records") for g in json_list(r.get("round_bandwidth_gbs"))]
    return (float(np.median(probes)), min(probes), max(probes)) if probes else None


def against_text(row, own, best):
    # which rate a share was taken against, with the figures it comes from, so the reader can redo the division:
    # the median of per-round shares (each round's GB/s over that round's probe), printed round by round
    rates = round_rates(row)
    if own is None or not rates:
        return f"of the best probe ({row['gbps']:.1f} over {best:.1f} GB/s)"
    # the share is the median round's, not the headline's: that round is named, and where the headline GB/s (the
    # median of all samples) prints otherwise, said as such (10: "4.2 GB/s (median), 16%" came from 3.8/23.1)
    mid = median_rounds(row)
    at = " and ".join(f"{g:.1f}/{p:.1f}" for g, p in mid)
    differs = all(f"{g:.1f}" != f"{row['gbps']:.1f}" for g, _ in mid)
    return ("of its own rounds' probes (the median over its rounds of GB/s over the probe that round is set "
            "against, its own where the cell felt its dip, else the best: "
            + ", ".join(f"{g:.1f}/{p:.1f}" for g, p in rates) + f"; the median {'between ' * (len(mid) > 1)}{at}"
            + (f", not the {row['gbps']:.1f} GB/s median of all its samples" if differs else "") + ")")



model = llm_shapes(["qwen2.5-0.5b"]).iloc[0]
context = 32768   # Qwen2.5-0.5B's context length (max_position_embeddings in its config.json)
heads, kv_heads, layers = int(model["heads"]), int(model["kv_heads"]), int(model["layers"])
head_dim = int(model["hidden"]) // heads
widths = (int(model["hidden"]), int(model["intermediate"]))
# the MLP's widths: the model's own (SMALL, only to check that the notebook runs, shrinks them)
hidden, intermediate = (256, 1024) if SMALL else widths
cpu_backends = tutorial.available("numpy", "numba", "torch-cpu")   # probes only these three
print(f"Qwen2.5-0.5B: {heads} heads, {kv_heads} KV heads, head_dim {head_dim}; MLP {hidden} -> {intermediate}"
      + ("" if (hidden, intermediate) == widths else f" (the model's: {widths[0]} -> {widths[1]}; SMALL shrinks it)"))
print("backends:", cpu_backends)
"""),
    md("""
## 1. Attention decode against the KV-cache length

`attention_decode` is one query token per sequence against a cache of `kv_len` keys and values
(grouped-query: each KV head serves 7 query heads here). Three ways to compute it: scores materialised
(`numpy-naive`), a flash-decoding kernel that splits the cache into chunks across the cores and merges
their softmax statistics (`numba-flash`), and torch's `scaled_dot_product_attention` (`torch-sdpa`).
"""),
    code("""
# the KV cache holds 2 (K and V) x kv_heads x head_dim float32 per token; in the quick and FULL runs the longest
# length's cache is this machine's DRAM working set (twice its last-level cache), so it is read from memory, not
# from a cache. SMALL (the tests): 256, 1024 and 4096 tokens only, no DRAM length.
caches = tutorial.machine_caches()
per_token = 2 * kv_heads * head_dim * 4
past_llc = -(-caches.dram // per_token // 256) * 256
kv_lens = ([256, 1024, 4096] if SMALL else sorted({512, 2048, 8192, 32768, past_llc}) if FULL
           else sorted({256, 4096, past_llc}))
decode_variants = [v for v, b in (("numpy-naive", "numpy"), ("numba-flash", "numba"), ("torch-sdpa", "torch-cpu"))
                   if b in cpu_backends]
decode = workbench.benchmark(
    "attention_decode", variants=decode_variants, backends=cpu_backends, budget_s=BUDGET_S,
    sizes=[{"batch": 1, "heads": heads, "kv_heads": kv_heads, "kv_len": L, "head_dim": head_dim} for L in kv_lens],
    progress=False, name="tutorial 10: attention decode vs KV length")
d = decode.df[decode.df["status"] == "ok"].copy()
d["kv_len"] = [json.loads(p)["kv_len"] for p in d["params"]]
d["KV cache"] = (d["kv_len"] * per_token).map(fmt_bytes)
# each cell's median with the results table's marks (report.marked_times): "~ " before a noisy cell's (hollow in
# the figure below), ", disturbed" after one whose quartiles lie half its median or more apart
d["median"] = marked_times(d)


levels = [f"the {fmt_bytes(c)} {name} cache" for c, name in ((caches.per_core, "per-core"), (caches.llc, "last-level"))
          if c]
# one rule for the size line and the steps below: a KV cache leaves a cache only when larger than it (as large as
# it fills it and has not left it: WorkingSets.caches_left)
level, where = caches.caches_left, caches.cache_place


beyond = [L for L in kv_lens if L > context]
print("KV lengths measured (" + ("SMALL" if SMALL else "FULL" if FULL else "quick run") + "): "
      + "; ".join(f"L={L:,}: {fmt_bytes(L * per_token)}, {where(L * per_token)}" for L in kv_lens))
if beyond:   # said plainly: the length that reaches DRAM here is this machine's choice, not the model's
    print(f"L={', '.join(f'{L:,}' for L in beyond)} is past Qwen2.5-0.5B's {context:,}-token context: a memory-sizing "
          "choice (the first length whose cache is twice this machine's last-level cache), not a length this model "
          "runs at; the per-token shapes are still the model's")
d["note"] = ["past the model's context" if L > context else "" for L in d["kv_len"]]
print(marks_said(figure=True))
# a cell with no median to read (disturbed, or in two modes) gets no rate either (docs/statistics.md: such a time
# prints no median, ±, rate or % peak): 10 printed 12.7 GB/s beside "two modes: 83.3 µs / 134 µs, disturbed"
d["GB/s"] = [f"({unread_why(r)})" if u else f"{r['gbps']:.3g}" for (_, r), u in zip(d.iterrows(), median_unread(d))]
d[["variant", "backend", "kv_len", "KV cache", "median", "GB/s", "note"]].sort_values(["variant", "kv_len"])
"""),
    code("""
fig, ax = plt.subplots(figsize=(7, 4))
n_noisy = n_crossed = n_two = 0
for i, (variant, g) in enumerate(d.sort_values("kv_len").groupby("variant")):
    # the library plots' marks (report.plots): a cell whose rounds fell in two modes as its two modes (a bar between
    # them, the table prints both), a disturbed one as a cross with a dotted bar where its quartiles lie, neither
    # joined by the line (its median is no value to read); a hollow ring over each other noisy one, counted apart
    # a cell both disturbed and in two modes is drawn disturbed, as the table (report.marked_times) reads it
    crossed = disturbed_mask(g)
    modes = [None if c else x for x, c in zip(mode_medians(g), crossed, strict=True)]
    two = np.array([x is not None for x in modes], dtype=bool)
    plain = ~(two | crossed)
    ax.loglog(g["kv_len"][plain], g["median_s"][plain], "o-", color=f"C{i}", label=variant)
    noisy = noisy_mask(g) & plain
    mark_noisy(ax, g["kv_len"][noisy], g["median_s"][noisy], f"C{i}")
    mark_disturbed(ax, g["kv_len"][crossed], g["median_s"][crossed], f"C{i}",
                   span=quartile_span(g[crossed], "median_s"))
    mark_modes(ax, g["kv_len"][two], [x for x in modes if x is not None], f"C{i}")
    n_noisy, n_crossed, n_two = n_noisy + int(noisy.sum()), n_crossed + int(crossed.sum()), n_two + int(two.sum())
noisy_legend(ax, n_noisy)
disturbed_legend(ax, n_crossed)
modes_legend(ax, n_two)
ax.set_xticks(kv_lens, [f"{L:,}" for L in kv_lens])   # the measured lengths, nothing in between
ax.xaxis.set_minor_locator(NullLocator())
ax.set_xlabel("KV-cache length L (tokens)")
ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))   # ticks in readable units: "20 µs", "1 ms"
ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick_time(v)))
ax.yaxis.set_minor_formatter(NullFormatter())
# the axis starts at a 1-2-5 tick at or below the lowest median, so the shortest lengths' points can be read off
low = float(d["median_s"].min())
if np.isfinite(low) and low > 0:
    decade = 10 ** np.floor(np.log10(low))
    ax.set_ylim(bottom=max(s_ * decade for s_ in (1, 2, 5) if s_ * decade <= low))
# where the KV cache passes the per-core cache (the step section 1's exponents name), when a measured step crosses it
if caches.per_core and min(kv_lens) * per_token <= caches.per_core < max(kv_lens) * per_token:
    ax.axvline(caches.per_core / per_token, color="grey", linestyle=":",
               label=f"cache = {fmt_bytes(caches.per_core)} per-core cache")
ax.set_ylabel("attention time of one layer, one sequence (median)")
ax.set_title(f"attention decode, {heads} heads / {kv_heads} KV heads, head_dim {head_dim}, float32")
ax.legend()
plt.show()
""", "figure"),
    code("""
# the exponent step by step between consecutive lengths (time ~ L^k over that step: 1 = in proportion to L), so a
# step that crosses a cache level shows as its own; a kink is read only where every cell it rests on is settled
# (not marked noisy) and no step fell (a longer cache cannot take less time: noise moved those medians)
STEEPER = 0.2   # how much steeper a step must be than the one before it to be called a kink


def shape(k):
    # within ±0.1 of 1 is linear; a step called steeper (a kink, below) is never also called linear
    return "close to linear" if 0.9 <= k <= 1.1 else "less than linear" if k < 0.9 else "more than linear"


unshaped = False   # whether any step was left unread for a noisy cell (its advice is said once, after the lines)
any_read = False   # whether any step's exponent was read at all
for variant, g in d.sort_values("kv_len").groupby("variant"):
    Ls, t, noisy, unread = g["kv_len"].tolist(), g["median_s"].tolist(), noisy_mask(g), median_unread(g)
    steps, ks = [], []
    for i in range(len(Ls) - 1):
        a, b = level(Ls[i] * per_token), level(Ls[i + 1] * per_token)
        if unread[i] or unread[i + 1]:
            # a step from a median the table does not print (a disturbed cell, or one whose rounds fell in two
            # modes) is no ratio to read: left out, said why, as the verdict lines do (10 printed "3.48x the time"
            # between two-mode cells)
            ks.append(float("nan"))
            why = "; ".join(f"L={Ls[j]:,} {unread_why(g.iloc[j])}" for j in (i, i + 1) if unread[j])
            whose = "their medians are" if unread[i] and unread[i + 1] else "its median is"
            steps.append(f"L={Ls[i]:,}->{Ls[i + 1]:,}" + (f" (leaves {levels[a]})" if a != b else "")
                         + f": not read ({why}: {whose} no value to read, so no ratio is taken from it)")
            continue
        ratio = t[i + 1] / t[i]
        k = np.log(ratio) / np.log(Ls[i + 1] / Ls[i])
        # a step's shape is read only where neither of its cells is marked noisy: a noisy step prints no exponent
        # (10 printed "L^0.86 by the medians (a noisy cell: its shape is not read)"), and bounds no kink below
        quiet = not (noisy[i] or noisy[i + 1])
        ks.append(k if quiet else float("nan"))
        noisy_here = ", ".join(f"L={Ls[j]:,}" for j in (i, i + 1) if noisy[j])
        steps.append(f"L={Ls[i]:,}->{Ls[i + 1]:,}" + (f" (leaves {levels[a]})" if a != b else "")
                     + (f": {ratio:.3g}x the time, " + (
                         "the time fell, which a longer cache cannot cause: noise moved these medians" if ratio <= 1
                         else f"L^{k:.2f}, {shape(round(k, 2))}") if quiet else
                        f": no shape read ({noisy_here} marked noisy)"))
    noisy_at = [f"{L:,}" for L, n in zip(Ls, noisy) if n]
    # a step left out (nan: unread or noisy) bounds no kink: both steps of a kink must be read
    kinks = [(i, ks[i - 1], ks[i]) for i in range(1, len(ks)) if ks[i] - ks[i - 1] >= STEEPER
             and level(Ls[i] * per_token) != level(Ls[i + 1] * per_token)]
    read_ks = [k for k in ks if np.isfinite(k)]
    said = []
    for i, before, after in kinks:
        left = levels[level(Ls[i] * per_token)]
        if min(read_ks) <= 0:   # a step fell: its line says noise moved those medians, so no kink is read
            continue
        else:
            # what the medians show, without a cause: the run measures none (its bandwidth lines may set none)
            said.append(f"it steepens from L^{before:.2f} to L^{after:.2f} on the step where the cache leaves {left}: "
                        "past it each token costs more time than before (what sets that cost this run does not "
                        "measure)")
    if not kinks and len(read_ks) > 1 and len(read_ks) == len(ks) and not noisy_at and min(read_ks) > 0:
        said.append("no step is steeper than the one before it by " + f"{STEEPER} or more")
    print(f"{variant}: " + "; ".join(steps) + "." + (" " + "; ".join(said) + "." if said else ""))
    unshaped = unshaped or bool(noisy_at)
    any_read = any_read or any(np.isfinite(k) for k in ks)
if unshaped:   # said once for every variant above: what would let the steps a noisy cell left unread be read
    # where no step was read, said plainly: the markdown below describes exponents this run did not print
    print(("No step's shape (exponent) is read in this run: every step above rests on a cell marked noisy or with "
           "no median to read, as it says. " if not any_read else "A step with a noisy cell is not read. ")
          + ("A quieter machine could read them (how busy this one was: the line after section 1's verdicts)."
             if machine_busy(d) else
             "More rounds could read them (FULL = True in the parameters cell measures 5 rounds a cell, not 3)."))
# what the figure shows, said: which variant had the lowest median at each length, and whether the verdict
# (the others paired round by round against it) settles that it was faster. The baseline is the lowest median among
# the cells whose median is read (neither disturbed nor in two modes): one chosen from an unread cell made every
# comparison at its length disturbed, while pairs of clean cells went unjudged (10: numba-flash's two-mode cell)
lowest = readable_lowest(d)
settled, judged_at = [], {}   # judged_at[(L, baseline, other)]: the verdict said here, reused below
block = NoteBlock()   # each length's verdicts, their shared reasons said once under all of them
for L, row in lowest.iterrows():
    at = decode.df[decode.df["cell_key"].isin(d.loc[d["kv_len"] == L, "cell_key"])]
    # mark_busy: the rows' load, the table's medians and which cells read disturbed, so that a verdict resting on a
    # disturbed cell says so (10 printed "torch-sdpa took at least 1.17× its time" and its median, 578 µs, beside a
    # table reading "two modes: 578 µs / 3.63 ms, disturbed")
    judged = mark_busy(speedup_vs_baseline(at, baseline_variant=row["variant"], baseline_backend=row["backend"]), at)
    said = []
    for _, v in judged[judged["verdict"] != "baseline"].iterrows():
        sides = at[at["variant"].isin([row["variant"], v["variant"]])]
        claim = noted_claim(v, sides, row["variant"], v["variant"], figure=True, kernel="attention_decode")
        said.append(((v, sides.to_dict("records")), claim))
        judged_at[(L, row["variant"], v["variant"])] = v
    # settled only beyond the noise: a length whose comparisons were disturbed ("at least 6.7×, by how much is
    # unknown: disturbed") is not counted as settled (report.beyond_noise); a length with a disturbed comparison
    # names no fastest and headlines no median (docs/statistics.md): its baseline is said as the table's lowest
    labels_at = [direction_said(v, cells) for (v, cells), _ in said]
    settled.append((f"L={L:,}", labels_at))
    here = d[d["kv_len"] == L]
    unread_here = [f"{r['variant']} ({unread_why(r)})" for (_, r), u in zip(here.iterrows(), median_unread(here)) if u]
    head = (f"no cell has a median to read ({', '.join(unread_here)}); each is paired against {row['variant']}, "
            "the lowest median, and every comparison reads disturbed" if len(unread_here) == len(here) else
            f"each is paired against {row['variant']}, the lowest median that can be read; a comparison here is "
            "disturbed, so no fastest is named" if any(label_word(x) == "disturbed" for x in labels_at) else
            f"{row['variant']} had the lowest median ({fmt_seconds(row['median_s'])})")
    if unread_here and len(unread_here) < len(here):
        head += f"; not taken as the baseline: {', '.join(unread_here)}"
    block.add(f"L={L:,}", head)
    for (v, _), claim in said:   # each head names both sides: indented under its length, with no label
        block.add("", Claim(f"  {claim.head}", claim.reasons, claim.text()))
print(block)
if lowest["variant"].nunique() == 1:   # which lengths settle it, which are disturbed, which are medians only
    print(lowest_text(lowest["variant"].iloc[0], settled))
"""),
    code("""
# numba-flash splits the cache across the cores; does that beat numpy's plain materialised scores? Said from
# the paired verdicts only: "beyond the noise" where the verdict is settled (may_state_cause), else no direction
if {"numba-flash", "numpy-naive"} <= set(d["variant"]):
    # one list per label direction_said gives: "disturbed" kept where the sentences printed it, "not settled" only
    # where the paired figure and the medians' ratio part (the note below), "could not tell" otherwise
    by = {"faster": [], "slower": [], "faster, disturbed": [], "slower, disturbed": [], NOT_SETTLED: []}
    flip = {"faster": "slower", "slower": "faster"}

    def said_as(v, L):
        # the verdict the per-length lines print: settled on cells none of which is disturbed (beyond_noise); a
        # direction whose interval excludes no change though the interval or a cell is disturbed ("at least
        # 1.04x", counted with its direction, never as beyond the noise); else no direction, with "disturbed" kept
        cells = d[(d["kv_len"] == L) & d["variant"].isin(["numba-flash", "numpy-naive"])].to_dict("records")
        why_at[f"{L:,}"] = disturbed_why(v, cells)   # which cell or the comparison, where it reads disturbed
        return direction_said(v, cells)

    why_at = {}

    for L in kv_lens:
        # the verdict the lines above printed for this pair where they judged it (one verdict per pair and length:
        # judged against another baseline, the run's typical noise differs and the two could read differently)
        if (L, "numpy-naive", "numba-flash") in judged_at:
            v = judged_at[(L, "numpy-naive", "numba-flash")]
            by.setdefault(said_as(v, L), []).append(f"{L:,}")
            continue
        if (L, "numba-flash", "numpy-naive") in judged_at:
            v = judged_at[(L, "numba-flash", "numpy-naive")]
            said = said_as(v, L)
            head = said.split(",")[0]
            by.setdefault(said.replace(head, flip[head]) if head in flip else said, []).append(f"{L:,}")
            continue
        at = decode.df[decode.df["cell_key"].isin(d.loc[d["kv_len"] == L, "cell_key"])]
        judged = speedup_vs_baseline(at, baseline_variant="numpy-naive", baseline_backend="numpy")
        flash = judged[judged["variant"] == "numba-flash"]
        for v in flash.to_dict("records"):
            by.setdefault(said_as(v, L), []).append(f"{L:,}")
    import numba

    cores = numba.get_num_threads()
    # "beyond the noise" on cells the figures draw noisy says why both hold (report.beyond_noise.beyond_text)
    pair_cells = d[d["variant"].isin(["numba-flash", "numpy-naive"])]
    noisy_L = {f"{int(L):,}" for L in pair_cells.loc[np.asarray(noisy_mask(pair_cells), dtype=bool), "kv_len"]}
    # a label with ", disturbed" is printed as the table's one word, "disturbed", naming no direction and not also
    # "could not tell" (10 printed "could not tell at L=256 (the comparison or a cell is disturbed)")
    one_way = ("its interval excludes no change but reaches ±50% or more, or a cell is disturbed: its line above "
               "gives only the bound that interval guarantees, not counted as a finding")
    why = {"faster, disturbed": one_way, "slower, disturbed": one_way,
           NOT_SETTLED: "the paired figure and the ratio of the two medians part", f"{UNDECIDED}, disturbed":
           "its interval reaches ±50% or more, or a cell is disturbed", "same, disturbed": "a cell is disturbed"}
    # too few rounds left at speed to pair is said as that, not as "disturbed" (report.beyond_noise.FEW_ROUNDS)
    few_why = ("too few of its rounds were left at speed to pair: its line above gives only the bound its interval "
               "guarantees, not counted as a finding")
    why.update({f"faster, {FEW_ROUNDS}": few_why, f"slower, {FEW_ROUNDS}": few_why,
                f"{UNDECIDED}, {FEW_ROUNDS}": "too few of its rounds were left at speed to pair"})
    verb = {"faster": "ran faster", "slower": "was slower"}
    word = lambda k: verb.get(label_word(k).removesuffix(f", {FEW_ROUNDS}"),   # noqa: E731 - beyond_noise.label_word
                              label_word(k).removesuffix(f", {FEW_ROUNDS}"))
    # a disturbed label names, length by length, the cell or the comparison that made it (beyond_noise.disturbed_why)
    named = lambda v: ", ".join(f"{x} ({why_at[x]})" if why_at.get(x) else x for x in v)  # noqa: E731
    # where every length settled the same way the verdict lines and the summary already say it: not a third time
    uniform = {k for k, v in by.items() if v} == {"faster"}
    print(machine_said(d, "section 1") if uniform else
          f"numba-flash ({cores} threads) against numpy-naive, the lines above summed up: "
          + "; ".join(f"{word(k)} "
                      + (f"at L={named(v)}" if label_word(k) == "disturbed" else f"at L={', '.join(v)}")
                      + (" (beyond the noise)" if k in ("faster", "slower") else
                         f" ({why[k]})" if k in why and label_word(k) != "disturbed" else
                         ": its line above gives only the bound its interval guarantees, not counted as a finding"
                         if k in ("faster, disturbed", "slower, disturbed") else "")
                      for k, v in by.items() if v) + "."
          # "beyond the noise" on cells the figures draw noisy says why both hold, in a sentence of its own
          + (f" {NOISY_ASIDE[:1].upper()}{NOISY_ASIDE[1:]}." if any(noisy_L & set(by[k]) for k in ("faster", "slower")
                                                                   if by.get(k)) else "")
          # whose share it is: every cell of section 1 (the verdicts' note gives the highest of their pairs' rows)
          + (f" {machine_said(d, 'section 1')}" if machine_said(d, "section 1") else ""))

# the memory's rate the GB/s column is set against: the host's copy bandwidth, probed before each round of a cell
# whose working set is past the last-level cache (the best probe: a probe reads low only while another tenant
# shares the memory bus); each cell is set against the probes of its own rounds (own_rounds_share)
far = d[d["kv_len"] * per_token > (caches.llc or float("inf"))]
probe = host_bandwidth(far)
if far.empty or probe is None:
    print("no cache length here is past the last-level cache (or its rows took no bandwidth probe): the GB/s "
          "column is not set against the memory's rate in this run")
else:
    L = int(far["kv_len"].max())
    print(f"at L={L:,} the KV cache ({fmt_bytes(L * per_token)}) is past the {fmt_bytes(caches.llc)} last-level cache; "
          f"the host's copy bandwidth: {probe[0]:.1f} GB/s ({probes_said(far, probe)})")
    for r in far[far["kv_len"] == L].sort_values("gbps", ascending=False).to_dict("records"):
        if median_unread(pd.DataFrame([r]))[0]:   # no median to read: no rate, no share (the table's mark)
            print(f"  {r['variant']}: {unread_why(r)}, as the table marks it: no GB/s and no share read from it")
            continue
        own = own_rounds_share(r)
        share = own if own is not None else r["gbps"] / probe[0]
        against = against_text(r, own, probe[0])
        print(f"  {r['variant']}: {r['gbps']:.1f} GB/s (median of all samples), {share:.0%} {against}: "
              + stream_share_text(share, "the KV cache", rounds_across_bands(r), machine_busy(far)))
"""),
    md("""
Attention decode reads the whole cache for every generated token, so its time follows the cache length.
One expects it to grow less than linearly while fixed costs (launch, Python, thread start-up) still weigh, in
proportion to L once they stop mattering, and faster than that where a longer cache leaves a cache level: these
are expectations, which the lines above test step by step against the medians without naming a cause. The lines above
go step by step between consecutive lengths (an average over all of them would hide a step that crosses a cache
level) and mark the steps that do. A step whose two cells are not marked noisy prints its exponent (time grows as
L to that power: within 0.9-1.1 is "close to linear", below 0.9 "less than linear", above 1.1 "more than linear")
and a kink where a step is steeper than the one before it by 0.2 or more. The exponents are read from the medians
alone, with no interval, so a difference near those cuts is no finding; a step resting on a noisy cell prints
"no shape read" instead, and
where every step does, the last of those lines says that no shape is read in this run and why. Where a sentence
settles who was faster, its head's figure ("took 1.19× its time") is the paired estimate, from the two variants
timed side by side, round by round. Its parenthesis gives that estimate's interval and then the ratio of the
table's two medians (each cell's own samples; the ratio to three figures, as the medians print). The two can differ:
the medians were not all taken side by side (a variant's row may hold samples of its own visit, and a round set
aside as taken while the host ran slow leaves one median and not the other; docs/statistics.md, "When the paired
estimate and the medians disagree"). The head's figure is the finding; the medians' ratio lets a reader check it
against the table. In the quick and FULL runs the longest cache measured
is twice the last-level cache, so that length's step reads it from DRAM: there the
last lines set each variant's GB/s against the host's copy bandwidth, probed before each of its rounds (05
explains the probe), to say how much of its time reading the cache once at that rate would take (a run without
such a length says so instead).

**Which cells are read.** A cell the table marks disturbed (its quartiles lie half its median or more apart) or in
two modes (its rounds fell in two groups) has no median to read: the table prints its mark instead of a GB/s,
no step's ratio or exponent is taken from it (its steps say "not read" and why), and it is never the baseline.
At each length the others are paired against the lowest median among the cells whose median is read; only
where every cell there is unread is the lowest median of all taken, and then every comparison there reads
disturbed. A comparison with an unread cell reads disturbed, as its line says.

**One rule for a busy machine, in both sections.** A reading of medians alone (a step's exponent, a kink, a
share, which median is lowest) from a cell marked noisy (`~` in the tables, hollow in the figure) is printed with
that mark and is no finding: a busy machine moves a median and nothing beside it says by how much, so no shape
or kink is named from one and a share from one may move on a rerun. A paired verdict (who was faster,
by its interval) may settle a direction on noisy cells, because its interval is built from the same busy rounds
and carries their spread; it then says its cells are noisy, and it says "disturbed" where that interval or a cell
passes ±50%. How busy the machine was is said once per section, in its closing line ("This run shared the
machine", or "The machine was not busy"): the highest share of the CPU that other processes took while any of that
section's cells ran; the verdicts' notes do not repeat it.

## 2. The MLP block: eager, graph and fused

At decode the MLP block multiplies a single row by three weight matrices. What each mode means on each
backend is in the README ("Execution modes"): on numpy and torch-cpu `graph` is a pre-planned sequence of
`out=` calls into preallocated buffers (no allocation, no per-call planning); on numba it is one compiled
driver for the whole block; `fused` is torch.compile on torch and fused kernels elsewhere. torch.compile
compiles on its first call, which can take far longer than the block itself, so the quick run leaves
`torch-fused` out; `FULL = True` measures it, and the execution-cache table in section 3 then prints its
recording (the compile and the first call).
"""),
    code("""
# each CPU runtime's block in the three modes (torch-fused, i.e. torch.compile, only with FULL); FULL also
# measures 5 rounds, for verdicts with a narrower noise floor
mlp_variants = [f"{runtime}-{mode}" for runtime in ("numpy", "numba", "torch") for mode in ("eager", "graph", "fused")
                if FULL or (runtime, mode) != ("torch", "fused")]
mlp = workbench.benchmark(
    "mlp_block", variants=mlp_variants, backends=cpu_backends, budget_s=BUDGET_S, rounds=5 if FULL else 3,
    sizes=[{"tokens": 1, "hidden": hidden, "intermediate": intermediate}], progress=False,
    name="tutorial 10: MLP block modes at decode")
# named variants are tried on every backend: keep each runtime's own (numpy-graph on numpy, not on numba)
own = [v.split("-")[0] == b.split("-")[0] for v, b in zip(mlp.df["variant"], mlp.df["backend"])]
every = mlp.df[own].assign(mode=[v.rsplit("-", 1)[-1] for v in mlp.df[own]["variant"]])
m = every[every["status"] == "ok"]
# the ok cells with the results table's marks (report.marked_times), as section 1's table; others say their status
every["time"] = every["status"]
every.loc[m.index, "time"] = marked_times(m)
m = every[every["status"] == "ok"]
print("\\n".join(f"{r.variant} on {r.backend}: {r.message}" for r in every.itertuples() if r.status == "unsupported"))
weights = 3 * hidden * intermediate * 4   # gate, up and down, float32
llc = tutorial.machine_caches().llc
print(f"the block's weights: {fmt_bytes(weights)} (3 matrices of {hidden} x {intermediate} float32); "
      + (f"they fit in the {fmt_bytes(llc)} last-level cache, so they can stay in cache between calls (not "
         "measured)" if llc and weights <= llc else
         f"they exceed the {fmt_bytes(llc)} last-level cache, so they cannot all stay in it between calls"
         + (f" (though part of them can: they are less than twice it, {fmt_bytes(2 * llc)})" if weights < 2 * llc
            else "") if llc else
         "the last-level cache size is unknown here"))
print("median time per call (each cell's own rounds; the verdicts below are paired):")
print(marks_said(figure=False))
table = every.pivot(index="backend", columns="mode", values="time")
# a pair the run did not measure says why, never a bare NaN
for backend in table.index:
    for mode in table.columns:
        if pd.isna(table.loc[backend, mode]):
            name = f"{backend.split('-')[0]}-{mode}"
            left_out = "left out of the quick run (torch.compile; FULL = True)"
            table.loc[backend, mode] = left_out if name not in mlp_variants else "no row"
table
"""),
    md("""
**How much of the block's time could reading its weights take?** Each row's GB/s (its compulsory bytes, the
weights above all, over its median) is set against the host's copy bandwidth, probed before each of its
rounds: the share is how much of its time reading the weights once at that rate would take. Tutorial 05's
three bands: 70-100% (the bytes can account for all or nearly all of the time), 40-70% (part of it),
under 40% (most of the time goes elsewhere); above 100% the block moved its bytes faster than the probe's rate,
so part of them came from the cache or the probe read low, and the share says nothing of its time. The rows count
compulsory bytes only, so a share says nothing about re-reads, and nothing about what the rest of the time is.
Where the weights fit in the last-level cache the question is not DRAM's, and where they are less than twice it
(this notebook's standard for a working set read from DRAM) part of them can stay in the cache between calls, so
a share is of the copy rate, not of DRAM's: the cell's first line says which of the three holds (where the
weights fit, it sets no share at all). Where section 1's probes and these read
ranges that do not overlap, it says that too: the host's bandwidth moved between the sections.
"""),
    code("""
# each runtime's block against the host's copy bandwidth, as the attention lines set the KV cache against it
probe = host_bandwidth(m)
bands = {}
if llc and weights <= llc:
    print(f"the weights ({fmt_bytes(weights)}) fit in the {fmt_bytes(llc)} last-level cache (said above), so "
          "no block's time is set against DRAM's rate here")
elif probe is None:
    print("these rows took no bandwidth probe: the MLP's GB/s is not set against the memory's rate in this run")
else:
    if llc and weights < 2 * llc:   # past the LLC but short of this notebook's DRAM standard (twice it)
        print(f"the weights ({fmt_bytes(weights)}) exceed the {fmt_bytes(llc)} last-level cache but are less than "
              f"twice it ({fmt_bytes(2 * llc)}, this notebook's standard for a working set read from DRAM): part of "
              "them can stay in the cache between calls, so each share below is of the host's copy rate, not a DRAM "
              "share")
    # the two sections' probes: where their ranges do not overlap, the host's bandwidth moved between them
    here_, there_ = probe_spread(m), probe_spread(far)
    if here_ and there_ and (here_[2] < there_[1] or there_[2] < here_[1]):
        print(f"the host's bandwidth moved between the sections: section 1's probes (its rows past the cache) read "
              f"{there_[1]:.1f}-{there_[2]:.1f} GB/s (median {there_[0]:.1f}), these rows' {here_[1]:.1f}-"
              f"{here_[2]:.1f} GB/s (median {here_[0]:.1f}), ranges that do not overlap; each share below uses the "
              "probes of its own rounds (said beside it), so a share here and one in section 1 are against different "
              "rates")
    print(f"stream rate: the host's copy bandwidth, {probe[0]:.1f} GB/s ({probes_said(m, probe)}); each cell "
          "against the probes of its own rounds where they took them (the best of them, except in a round whose dip "
          "the cell felt):")
    for runtime in ("numpy", "numba", "torch"):
        for r in m[m["variant"].str.startswith(runtime + "-")].sort_values("mode").to_dict("records"):
            if median_unread(pd.DataFrame([r]))[0]:   # no median to read: no rate, no share (the table's mark)
                print(f"  {r['variant']}: {unread_why(r)}, as the table marks it: no GB/s and no share read from it")
                continue
            own = own_rounds_share(r)
            share = own if own is not None else r["gbps"] / probe[0]
            across = rounds_across_bands(r)
            band = stream_share_text(share, "its weights", across, machine_busy(m))
            noisy = bool(noisy_mask(pd.DataFrame([r]))[0])   # its rounds disagree: the share may move on a rerun
            bands.setdefault(runtime, []).append((r["mode"], share, noisy, bool(across)))
            against = against_text(r, own, probe[0])
            print(f"  {r['variant']}: {fmt_seconds(r['median_s'])} for {fmt_bytes(r['bytes'])}, {r['gbps']:.1f} GB/s, "
                  f"{share:.0%} {against}: {band}" + (" (a noisy cell: may move on a rerun)" if noisy else ""))
    if any(x > 1 and not split for said in bands.values() for _, x, _, split in said):
        print("  (Above 100%: the block moved its bytes faster than the probe's rate, so that rate is no ceiling for "
              "it here: part of its weights came from the cache, or the probe read low; the copy probe also counts "
              "the bytes it reads and writes, not the reads of the lines it overwrites, which the memory moves too.)")
    def word(x, split):
        if split:   # its rounds fall in more than one band: none is read
            return "its rounds in more than one band"
        return "above it" if x > 1 else "near it" if x >= 0.7 else "part" if x >= 0.4 else "well below"

    per_runtime = {rt: ", ".join(f"{mode} {word(x, split)} ({x:.0%}{', noisy cell' if n else ''})"
                                 for mode, x, n, split in said) for rt, said in bands.items()}
    print("Share of the stream rate, per runtime (above it: over 100%, from the cache or a low probe; near it: "
          "70-100%; part: 40-70%; well below: under 40%): "
          + "; ".join(f"{rt}: {said}" for rt, said in per_runtime.items()))
"""),
    code("""
sentences, readings, apart, labels = [], {}, [], {}   # labels[(mode, backend)]: direction_said, for the summary
whys = {}   # whys[(mode, backend)]: which cell or the comparison is disturbed (beyond_noise.disturbed_why)
for backend, g in m.groupby("backend"):
    names = dict(zip(g["mode"], g["variant"]))
    for other in ("graph", "fused"):
        if "eager" not in names or other not in names:
            continue
        verdicts = pair_verdicts(mlp.df, names["eager"], names[other], backend)
        sides = m[(m["backend"] == backend) & m["variant"].isin([names["eager"], names[other]])]
        for _, v in verdicts.iterrows():
            sentences.append((f"{backend}", noted_claim(v, sides, names["eager"], names[other])))
            # beyond the noise only where neither the interval nor a cell is disturbed (report.beyond_noise)
            readings.setdefault(other, []).append((backend, reading(v), size_unsettled(v),
                                                   beyond_noise(v, sides.to_dict("records")),
                                                   bool(np.asarray(noisy_mask(sides), dtype=bool).any())))
            labels[(other, backend)] = direction_said(v, sides.to_dict("records"))
            whys[(other, backend)] = disturbed_why(v, sides.to_dict("records"))
            # the table's two medians (each cell's own), as a speed-up of the other mode over eager
            t_ = sides.set_index("variant")["median_s"]
            med, lo, hi = float(t_[names["eager"]] / t_[names[other]]), float(v["ci_low"]), float(v["ci_high"])
            if np.isfinite([med, lo, hi]).all() and not lo <= med <= hi and not medians_disagree(v):
                # outside the interval, though the verdict's own medians (of the paired rounds) are not past its
                # tolerance: said with the figures each rests on, and "by less than the tolerance" only where the
                # table's ratio is (it divides other medians than the verdict's, and may lie further out)
                past = med / hi - 1 if med > hi else lo / med - 1
                within = past <= MEDIANS_TOLERANCE
                apart.append(f"{backend}'s {other}: the paired rounds {DISAGREE} ({med:.3f}× from the table's "
                             f"medians, outside the paired interval {lo:.3f}-{hi:.3f}×, by {past:.1%}"
                             + (f", less than the {MEDIANS_TOLERANCE:.0%} the verdict allows for each median's own "
                                "error, so it still reads as judged)" if within else
                                f"; the verdict reads the medians of the paired rounds, "
                                f"{float(v['median_a']) / float(v['median_b']):.3f}×, within that tolerance, so it "
                                "still reads as judged)"))
# across runtimes: each runtime's eager block against numpy's (one statistic: the paired speed-up)
eager_rows = m[m["mode"] == "eager"]
across = mark_busy(speedup_vs_baseline(eager_rows, baseline_variant="numpy-eager", baseline_backend="numpy"),
                   eager_rows)
for _, v in across[across["verdict"] != "baseline"].iterrows():
    sides = eager_rows[eager_rows["variant"].isin(["numpy-eager", v["variant"]])]
    sentences.append(("", noted_claim(v, sides, "numpy-eager @ numpy", f"{v['variant']} @ {v['backend']}")))
block = NoteBlock()   # the section's verdicts, each shared reason said once under them
for label, claim in sentences:
    block.add(label, claim)
print(block)
for other, said in readings.items():   # what the paragraph below may say, from these verdicts
    wins = sorted({b + (" (the direction is settled, its size is not)" if wide else "")
                   for b, s, wide, beyond, _ in said if s == "faster" and beyond})
    noisy_wins = sorted(b for b, s, _, beyond, _ in said if s == "faster" and not beyond)
    noisy = any(n for _, s, _, beyond, n in said if s == "faster" and beyond)
    # slower beyond the noise: the introduction says graph and fused are meant to remove per-call cost; where one
    # took longer than eager beyond the noise, that is said against it (10 printed "removes some of it" and, alone,
    # "torch-graph took at least 1.08x its time")
    losses = sorted(b for b, *_ in said if labels[(other, b)] == "slower")
    # the backends that measured it, by name, each with its line's one word (10 printed "fused did not beat eager
    # beyond the noise on any backend here" where only numba measured fused, and that comparison was disturbed)
    measured = [b for b, *_ in said]
    where_ = (f"{measured[0]}, the only backend that measured it" if len(measured) == 1 else ", ".join(measured))
    one_word = lambda x: ("disturbed" if label_word(x) == "disturbed"   # noqa: E731
                          else x.replace(f", {FEW_ROUNDS}", f" ({FEW_ROUNDS})"))
    print((f"{other} beat eager beyond the noise on {', '.join(wins)}" + (f" ({NOISY_ASIDE})" if noisy else "")
           if wins else
           f"{other} did not beat eager beyond the noise on {where_}"
           # each backend's word, where no line below gives it (the graph line below gives graph's)
           + (" (its line above: " + "; ".join(f"{b}: {one_word(labels[(other, b)])}" for b in measured) + ")"
              if other != "graph" else ""))
          # which cell or the comparison is disturbed, named as the table and the line print it
          + (f"; it measured faster on " + "; ".join(f"{b}, where {whys[(other, b)]}" for b in noisy_wins)
             + ": not beyond the noise" if noisy_wins else "")
          + (f"; it took longer than eager beyond the noise on {', '.join(losses)}"
             + (f" ({NOISY_ASIDE})" if any(n for b, *_, n in said if b in losses) else "")
             + f": there what {other} removes "
             "(allocation and per-call setup between the five kernels) did not make up for what its own path costs, "
             "so the introduction's 'meant to remove some of it' did not pay on that runtime in this run (these rows "
             "do not break down where its extra time goes)" if losses else ""))
if machine_said(m, "section 2"):   # the floors above are this run's: how busy the machine was, over which cells
    print(machine_said(m, "section 2"))
# what the table's medians show for graph against eager, and how far the verdicts above settle it
t = m.pivot(index="backend", columns="mode", values="median_s")
if {"eager", "graph"} <= set(t.columns):
    pairs = t[["eager", "graph"]].dropna()
    # a disturbed cell's median is no value to read (the table marks it ", disturbed"): its backend is left out of
    # the medians' order (10 printed "numba 825 µs vs 5.23 ms" of an eager cell whose rounds fell in two modes)
    # and a cell whose rounds fell in two modes, which the table prints as both modes, no median headlined
    crossed = [b for b in pairs.index if any(
        quartiles_wide(r) or bimodal_split([float(x) for x in json_list(r.get("round_medians_s"))]) is not None
        for r in m[(m["backend"] == b) & m["mode"].isin(["eager", "graph"])].to_dict("records"))]
    read = pairs.drop(index=crossed)
    shown = {b: (fmt_seconds(read.loc[b, "graph"]), fmt_seconds(read.loc[b, "eager"])) for b in read.index}
    # longer as printed: two medians that print alike are not called apart
    longer = [b for b in read.index if shown[b][0] != shown[b][1] and read.loc[b, "graph"] > read.loc[b, "eager"]]
    medians = ", ".join(f"{b} {g} vs {e}" for b, (g, e) in shown.items())
    unread = (f" {', '.join(crossed)} {'is' if len(crossed) == 1 else 'are'} left out: a cell there is disturbed "
              "or its rounds fell in two modes, so no median of it is headlined." if crossed else "")
    # the label each sentence above earned (report.beyond_noise.direction_said): "disturbed" kept where it printed
    # it, "not settled" only where the paired figure and the medians' ratio part (the note below)
    words = {"faster": "graph faster", "slower": "graph slower", "same": "the same within ±5%",
             f"faster, {FEW_ROUNDS}": f"graph faster, amount unknown ({FEW_ROUNDS})",
             f"slower, {FEW_ROUNDS}": f"graph slower, amount unknown ({FEW_ROUNDS})",
             f"{UNDECIDED}, {FEW_ROUNDS}": f"{UNDECIDED} ({FEW_ROUNDS})"}
    # one word per comparison: a disturbed one reads "disturbed", never "could not tell (... disturbed)" nor a direction
    # naming which cell or whether the comparison is disturbed (beyond_noise.disturbed_why), as the table marks it
    # a disturbed one is said in one word: its line above names the cell or the interval that made it so
    verdicts = "; ".join(f"{b}: disturbed" if label_word(labels[("graph", b)]) ==
                         "disturbed" else f"{b}: {words.get(labels[('graph', b)], labels[('graph', b)])}"
                         for b, *_ in readings.get("graph", []))
    # each backend's word is the one its line above printed (10 summed up "torch-cpu: disturbed" beside a line
    # reading "could not tell torch-graph from torch-eager", its interval wide for too few rounds at speed)
    for b, *_ in readings.get("graph", []):
        head = next(c.head for lb, c in sentences if lb == b and f"{b.split('-')[0]}-graph" in c.head)
        w = label_word(labels[("graph", b)])
        assert (w == "disturbed") == ("disturbed" in head), (b, w, head)
        assert not w.startswith(UNDECIDED) or head.startswith(UNDECIDED), (b, w, head)
    # a direction is a finding only where its label is one beyond the noise (not "faster, disturbed")
    settled_graph = [b for b, *_ in readings.get("graph", []) if labels[("graph", b)] in ("faster", "slower")]
    # the verdicts first (the finding, where there is one), then the medians' order, said as no finding beyond them
    # the medians' order only on the backends no paired verdict settled: a settled one is said once, by its verdict
    rest = [b for b in read.index if b not in settled_graph]
    medians = ", ".join(f"{b} {shown[b][0]} vs {shown[b][1]}" for b in rest)
    by_medians = (f"By the medians alone, graph took longer than eager on {len([b for b in longer if b in rest])} of "
                  f"{len(rest)} backends{' no verdict settled' if settled_graph else ''} "
                  f"(graph vs eager: {medians}).{unread}" if len(rest) else
                  f"No medians are read for graph against eager ({', '.join(crossed)}: a cell on each is disturbed "
                  "or its rounds fell in two modes, so no median of it is headlined).")
    print(f"Graph against eager, by the paired verdicts above: {verdicts}. "
          + (f"Only on {' and '.join(settled_graph)} is the direction a finding."
             + (f" {by_medians}" if rest else "") if settled_graph else
             f"None settles a direction. {by_medians}" + (" That order is not a finding." if len(read) else "")))
if apart:
    print("Where the two statistics part: " + "; ".join(apart) + ": neither states a direction.")
"""),
    md("""
Each sentence above is the package's paired verdict (blocks timed side by side in one visit, or interleaved
rounds), by the rule docs/statistics.md states: "faster" where the interval excludes no change (its lower end
is above 1×) and the estimate exceeds 5%, the smallest effect a verdict names ("slower" the mirror of it); its
parenthesis gives that interval and the ratio of the table's two medians, to three figures as the medians are
printed (an unsettled sentence, "within its noise floor", gives the same medians and ratio beside its paired
estimate, which is the paired rounds' and can differ from them). Where that interval spans more than
50% end to end (say 1.004-2.0×), the sentence gives only the bound it guarantees ("at least 1.004×"): the
direction is settled, its size is not. "Not settled" where the paired figure and the ratio of the two medians
in the table part by more than its interval (a variant timed beside its baseline can run otherwise than alone:
docs/statistics.md) — that meaning only; "disturbed", with no interval, where the noise floor passed ±50% or a
cell's quartiles lie half its median or more apart; "could not tell" where neither holds and no direction was
shown. One case of "disturbed" still names a direction: where every quartile of one side's times lies below every
quartile of the other's (its note says so), three quarters of its samples ran faster than three quarters of the
other's, a gap the spread did not close, so the line names that side ("was faster, the amount not readable") and
gives no size; nothing else about a disturbed pair is read. Every runtime reads
the same weights (the same bytes above), so where one runtime's block takes several times another's, the
compulsory bytes are not the difference; what the rest of its time goes to, these rows do not break down.
What `graph` can win is what it removes — allocation and per-call setup between the
five kernels — which matters most when the kernels themselves are short; the last lines above say whether that
showed beyond the noise here, and where a mode took longer than eager beyond the noise they say that too: there
what it removes did not pay on that runtime in this run.
"""),
    md("""
## Where the time goes: attention beside the MLP

In the quick run and in `FULL` both parts are measured at this model's own shapes for one layer and one sequence
(the MLP at its own widths, attention with its own heads), so their times can be set side by side: a decode
step runs both once per layer, and the shares below are each part's share of the two. A `SMALL` run (the
tests') shrinks the MLP to 256 -> 1024, so its MLP time is not the model's: it sets no share, and says so.
The rest of a layer (the q/k/v/o projections,
two norms, rope) and the step's embedding and output projection are not measured here. Attention grows with
the cache length, the MLP does not depend on it. Each runtime's attention is set beside the same runtime's
eager MLP block, by the medians of the two cells (different kernels: no paired verdict), and where the two
cells' quartile ranges overlap the order is not read. A cell whose quartiles lie half its median or more apart (the
results table's "disturbed") gives no share, and no step total is built on it.
"""),
    code("""
def cell_unread(row):
    # a cell section 1 does not read: marked noisy (its rounds spread past 10%, or the machine was busy), or its
    # quartiles past ±50% of its median (the summary's "disturbed")
    one = pd.DataFrame([row])
    return bool(noisy_mask(one)[0]) or spread_disturbed(float(row["iqr_s"]), float(row["median_s"]))


def warm_bound(attention, longest, b):
    # one layer's KV at a length within the model's context fits in the last-level cache and was timed warm, each
    # call rereading what the last left there; a step reads every layer's KV and weights once, through that cache:
    # the estimate is then a lower bound, and the GB/s this attention reached past the cache says by how much
    llc = caches.llc or 0
    if not len(longest) or not llc or float(longest["bytes"].iloc[0]) > llc:
        return ""
    L, kv = int(longest["kv_len"].iloc[0]), float(longest["bytes"].iloc[0])
    said = (f". That total is a lower bound: at L={L:,} one layer's attention working set ({fmt_bytes(kv)}) fits in "
            f"the {fmt_bytes(llc)} last-level cache and was timed warm, call after call, while a step reads all "
            f"{layers} layers' ({fmt_bytes(layers * kv)}) and their MLP weights ({fmt_bytes(layers * float(b.bytes))}) "
            "once each, from DRAM past that cache")
    cold = d[(d["variant"] == attention) & (d["bytes"] > llc)]
    if len(cold):
        c = cold.loc[cold["kv_len"].idxmin()]
        unread = [f"L={int(x['kv_len']):,}" for x in (longest.iloc[0], c) if cell_unread(x)]
        if unread:
            # a bound or a cause drawn from cells section 1 did not read is no finding (10 gave "up to 8.3x", read
            # from DRAM, from two noisy cells whose steps section 1 refused to read)
            cells = f"cell at {unread[0]} is" if len(unread) == 1 else f"cells at {' and '.join(unread)} are"
            return said + (f"; how much larger is not read here: this attention's {cells} marked noisy, as section 1 "
                           "says, so no GB/s of it is set against another's")
        said += (f"; this attention ran {float(longest['gbps'].iloc[0]):.1f} GB/s warm at L={L:,} and "
                 f"{float(c['gbps']):.1f} GB/s at L={int(c['kv_len']):,} ({fmt_bytes(float(c['bytes']))}, past the "
                 f"cache), {float(longest['gbps'].iloc[0]) / float(c['gbps']):.1f}× apart: read from DRAM, its time "
                 "and share in a real step can be up to about that much larger")
    return said


pairs = [("numpy-naive", "numpy-eager"), ("numba-flash", "numba-eager"), ("torch-sdpa", "torch-eager")]
noisy_at = pd.Series(np.asarray(noisy_mask(d), dtype=bool), index=d.index)
mlp_at = {r.variant: r for r in m.itertuples()}
own_widths = (hidden, intermediate) == widths
if not own_widths:
    print(f"the MLP ran at {hidden} -> {intermediate}, not the model's {widths[0]} -> {widths[1]} (SMALL): "
          "its time is not the model's, so no share is read")
for attention, block in pairs:
    if block not in mlp_at or attention not in set(d["variant"]) or not own_widths:
        continue
    b = mlp_at[block]
    parts = []
    b_wide = quartiles_wide(b._asdict())
    for r in d[d["variant"] == attention].sort_values("kv_len").itertuples():
        overlap = r.q1_s <= b.q3_s and b.q1_s <= r.q3_s
        # a cell whose quartiles span past ±50% of its median (the summary's "disturbed"): no share rests on its
        # median (10 printed "93% of the two" from an MLP median whose quartiles overlapped an attention's 3.9x away)
        wide = [w for w, hit in (("this cell's", quartiles_wide(r._asdict())), ("the MLP's", b_wide)) if hit]
        share = r.median_s / (r.median_s + b.median_s)
        # whole percents (a median of noisy rounds has no third digit), a noisy cell and a length past the
        # model's context said as such
        pct_ = "under 1%" if share < 0.01 else f"{100 * share:.0f}%"
        caveat = [w for w, hit in (("a noisy cell: may move on a rerun", bool(noisy_at.loc[r.Index])),
                                   ("past the model's context", r.kv_len > context)) if hit]
        whose = "its median" if len(wide) == 1 else "their medians"
        unread = f"{' and '.join(wide)} quartiles lie half {whose} or more apart"
        parts.append(f"L={r.kv_len:,}: {fmt_seconds(r.median_s)}, " + (
            f"quartile ranges overlap the MLP's ({unread}, disturbed): not ordered" if overlap and wide else
            "quartile ranges overlap the MLP's: not ordered" if overlap else
            f"no share read ({unread}, disturbed)" if wide else f"{pct_} of the two")
            + (f" ({'; '.join(caveat)})" if caveat else ""))
    # the step's total at the longest length this model runs at (a length past its context is not its step)
    within = d[(d["variant"] == attention) & (d["kv_len"] <= context)]
    longest = within[within["kv_len"] == within["kv_len"].max()]
    total = layers * (longest["median_s"].iloc[0] + b.median_s) if len(longest) else 0.0
    wide_total = [w for w, hit in (("the attention's", len(longest) and quartiles_wide(longest.iloc[0])),
                                   ("the MLP's", b_wide)) if hit]
    at_longest = f"L={int(longest['kv_len'].iloc[0]):,}" if len(longest) else ""
    # a disturbed part widens the total's band by its own share, it does not void the total (10 refused a total
    # over an attention 1% of the step): refused only where the summed quartiles themselves span past ±50%
    band = total_band([longest.iloc[0].to_dict(), b._asdict()], layers) if len(longest) else None
    whose_wide = (f"{' and '.join(wide_total)} quartiles lie half "
                  f"{'its median' if len(wide_total) == 1 else 'their medians'} or more apart (disturbed)")
    step = ("" if not len(longest) else
            f"; no decode-step total at {at_longest}: {whose_wide}, and summed over the {layers} layers their "
            "quartiles span too wide a band to inform" + (f" ({fmt_seconds(band[1])} to {fmt_seconds(band[2])})"
                                                          if band else "")
            if wide_total and not band_readable(band) else
            f"; a decode step runs both in each of the {layers} layers: about {fmt_seconds(float(f'{band[0]:.2g}'))} "
            f"for the two at {at_longest}, between {fmt_seconds(band[1])} and {fmt_seconds(band[2])} by their "
            f"quartiles summed ({whose_wide}, so the band, not the total of the medians, is what is read)"
            if wide_total else
            f"; a decode step runs both in each of the {layers} layers: about "
            f"{fmt_seconds(float(f'{total:.2g}'))} for the two at "
            f"{at_longest}, the longest length measured within the model's context "
            f"({layers} times two medians: any error in them is multiplied too)")
    # the bound bounds the total just printed: none is added where no total was (10 printed "A lower bound"
    # after "no decode-step total", bounding nothing)
    step += warm_bound(attention, longest, b) if len(longest) and not wide_total else ""
    assert "lower bound" not in step or "a decode step runs both" in step, step
    print(f"{attention} beside {block} ({fmt_seconds(b.median_s)} a layer, any L"
          + (", its quartiles past ±50% of it: disturbed" if b_wide else "") + "): " + "; ".join(parts) + step)
"""),
    md("""
## 3. The execution cache

Every `graph` and `fused` variant goes through one shape-keyed cache: the first call for a shape records
(captures a graph, plans a launch list, compiles a fused kernel), later calls hit. Each row stores the
cache's statistics at the end of its cell (`exec_cache`); a fused recording that fails falls back to eager,
and the row says so. A recording's time is the plan (buffers, launch list, a capture or a compile) *and the
block's first call*: the builder makes that call itself, before any timed call, so the first call's cost lands
in the recording, not in the cell's median. Set beside the cell's median call, it says what recording added.
On numba, `graph` is one `@njit` driver function, which numba compiles on its first call: numba-graph's recording
includes that compile.
"""),
    code("""
# a cell section 2 marks disturbed or in two modes has no median to divide by (median_unread): its mark is printed
# in place of a median call and no ratio is taken from it (10 printed "2,255x" over a two-mode cell's 295 µs)
stats = pd.DataFrame([{"variant": r["variant"], "backend": r["backend"], "call": r["median_s"], "q1": r.get("q1_s"),
                       "time": r["time"], "unread": bool(median_unread(pd.DataFrame([dict(r)]))[0]),
                       "noisy": bool(noisy_mask(pd.DataFrame([dict(r)]))[0]), **json.loads(r["exec_cache"])}
                      for _, r in every.iterrows() if isinstance(r.get("exec_cache"), str)])
# each median call as section 2's table prints it, its marks kept (10 printed "69.1 µs" here of a cell marked
# "~ 69.1 µs" there); a ratio over a noisy median carries the mark too and is said to be no finding
if stats["noisy"].any():
    print(f"A median call marked '{NOISY_MARK}' is a noisy cell's (section 2's table): a ratio over it is marked "
          "alike and is no finding, a size only; a quieter machine could give one that is.")
# per variant: its own shape's replays and recording time; the worker process's totals (hits, misses,
# recordings over every variant that process ran: numba-graph and numba-fused share one) are left out
pd.DataFrame({"variant": stats["variant"], "backend": stats["backend"], "mode": stats["mode"],
              "replays of its shape": stats["shape_hits"],
              "recording (plan + first call)": stats["record_s"].map(fmt_seconds),
              "median call": stats["time"],
              # a single recording over a median: two significant figures ("3.7x", "40x", "2,300x")
              "recording / median call": ["none: no median to read" if u else f"{NOISY_MARK} " * n + two_figures(x)
                                          for x, u, n in zip(stats["record_s"] / stats["call"], stats["unread"],
                                                             stats["noisy"])],
              "fell back to eager": stats["fallback"].map(lambda f: f if isinstance(f, str) else "no")})
"""),
    code("""
# the statistics are consistent: each recorded shape was recorded once, then replayed from the cache
assert (stats["recordings"] >= 1).all() and (stats["shape_hits"] >= 1).all()
assert (stats["fusion_successes"] + stats["fallbacks"] <= stats["fusion_attempts"]).all()
fell_back = stats[stats["fallback"].notna()]
print(f"{len(stats)} cached rows; {int(stats['shape_hits'].sum())} replays from the cache, summed over them; "
      f"{len(fell_back)} fused recordings fell back to eager"
      + (": " + "; ".join(f"{r.variant} on {r.backend}: {r.fallback}" for r in fell_back.itertuples())
         if len(fell_back) else ""))
"""),
    md("""
The same statistics are available in Python for work done in this process: `workbench.execution_stats()`
(InfiniLM's `get_stats()` in spirit) and `workbench.clear_cache()`. Benchmarks run each backend in a worker
process, so the notebook's own cache only fills when a block runs here (numpy-graph once more, in this
process, one short round); its recording is set beside the worker's recording of the same variant, like with
like (one recording each, no round behind either), and only the worker's, whose cell timed its calls over
rounds, is set beside a median call:
"""),
    code("""
workbench.clear_cache()
here = workbench.benchmark("mlp_block", variants=["numpy-graph"], backends=["numpy"], budget_s=0.05, rounds=1,
                           sizes=[{"tokens": 1, "hidden": hidden, "intermediate": intermediate}], progress=False,
                           isolation="in-process", name="tutorial 10: cache in this process")
s = workbench.execution_stats()
print({k: v for k, v in s.items() if k != "entries"})
# the two recordings of numpy-graph, each with what it includes: the plan and one first call, in its own process;
# the worker's cell also timed its calls over rounds: only its recording is set beside a median call
mine = here.df[here.df["status"] == "ok"]
worker = stats[stats["variant"] == "numpy-graph"]
if len(mine) and len(worker) and s["entries"]:
    rec, w = s["entries"][0]["record_s"], worker.iloc[0]
    two = two_figures   # ratios of single values: two significant figures
    beside = (f"The worker's cell also timed its calls over rounds, but section 2 gives it no median to read "
              f"({w['time']}): its recording is not set beside one" if w["unread"] else
              f"The worker's cell also timed its calls over rounds (median "
              f"{w['time']}), so its recording took {two(w['record_s'] / w['call'])} one median call"
              + (" (a noisy median, as its mark says: the ratio is a size, no finding)" if w["noisy"] else "")
              + ". A "
              "recording holds one call of the block: what it takes past one median call is the plan, and how much "
              "slower that first call ran than the calls after it"
              + (" (here it took less than one median call: that single first call ran faster than the rounds' "
                 "median, by more than the plan cost, so the plan's cost is not separable from one call's spread here)"
                 if w["record_s"] < w["call"] else ""))
    print(f"numpy-graph's recording (the plan plus the block's first call), one timing in each process: "
          f"{fmt_seconds(rec)} in this process, {fmt_seconds(w['record_s'])} in the worker "
          f"({two(rec / w['record_s'])} the worker's). " + beside
          # a recording holds one call: one under the cell's first quartile undercuts its median and any total or
          # band built on it (10: a 7.83 ms recording beside a 23.8 ms median and a step band from it, unremarked)
          + (f". It even ran under the cell's first quartile ({fmt_seconds(w['q1'])}): one call of the block (with "
             "the plan) ran faster than three quarters of the timed calls, so its median, and its quartile band, may "
             "be of a slowed host rather than the block's own time"
             if pd.notna(w.get("q1")) and w["record_s"] < w["q1"] and not w["unread"] else "")
          + ". This process's single short round gives no median with a known noise, so its recording is set beside "
          "the worker's recording only. Two single timings carry no interval, so their ratio is no finding.")
pd.DataFrame(s["entries"])
"""),
]

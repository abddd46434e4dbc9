"""Tutorial: Memory-bound fusion: do the bytes moved decide the time?."""

from _cells import code, md, params

CELLS = [
    md("""
# Memory-bound fusion: do the bytes moved decide the time?

`bias_gelu` (`gelu(x + bias)`) and `rmsnorm_residual` (`h = x + residual; out = rmsnorm(h) * w`) do a
handful of FLOPs per element. If that arithmetic is cheap beside streaming the data in, their time is
(bytes moved) / (bandwidth), and fusion should pay: written *eagerly* as separate array operations,
every intermediate is written to memory and read back; a *fused* kernel reads each input once and writes
each output once; a *compiler* (`torch.compile`) can fuse for you.

That is the hypothesis, not a fact about this machine: whether the arithmetic or the bytes set the time is
what the stream-rate answer under each table tests, at a size past the last-level cache (a `SMALL` run, the tests',
has no such size: it says so at its start and where each answer would be). Whether fusion pays on this machine,
at these sizes, is measured below: every backend that has both an unfused and a fused (or compiled) variant gets
a verdict from the rounds (faster, slower, the same (its whole interval within ±5%), or could not tell), and the
text under each table is chosen from that verdict, with the explanation that fits what was measured. The spec
counts only the compulsory bytes, so the GB/s column is the same bytes divided by each variant's time: a slower
variant shows a lower GB/s.
"""),
    params("""
SMALL = False              # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False               # True: every backend, torch.compile included if MODES asks (several minutes)
BUDGET_S = 0.2             # timing budget per measured cell, in seconds
MODES = ["eager", "fused"]  # add "compiled" for torch.compile (it compiles on its first call: a minute or more)
STORE = "workbench-results.sqlite"
"""),
    code("""
import numpy as np
import pandas as pd
import workbench
from workbench import tutorial
from workbench.core.units import fmt_bytes, fmt_seconds
from workbench.backends.registry import all_backends
from workbench.judge.dips import DIP_FELT, bandwidth_dips, felt_dips
from workbench.judge.verdicts import is_noisy
from workbench.judge.verdict_labels import reads_disturbed
from workbench.report.busy_caveat import shared_machine_advice
from workbench.report.pass_bound import pass_bound_text
from workbench.report.ratio_text import interval_name, mark_text
from workbench.report.claims import (bandwidth_down_text, cache_text, check_claim, disturbed_cells_text,
                                     host_bandwidth, interval_text, is_disturbed, json_list, last_level_cache_bytes,
                                     may_state_cause, medians_disagree, quartiles_wide, rests_on_disturbed,
                                     pair_verdicts, reading, shown_verdicts, table_ratio, verdict_claim)
from workbench.report.claim_notes import Claim, NoteBlock

tutorial.begin(FULL, small=SMALL,
                leaves_out="the two sizes chosen from this machine's caches, one within the last-level cache and one "
                           "past it in DRAM (it times one size, 64x1024, instead), and with the DRAM size the "
                           "stream-rate answer to the title's question")
"""),
    code("""
for k in ["bias_gelu", "rmsnorm_residual"]:
    print(k, "->", {n: v.mode for n, v in workbench.variants(k).items()})
"""),
    md("""
## What fusion did, per backend

`fusion_findings` pairs, on each backend, every fused or compiled variant with the unfused (eager) one
and asks the package for a verdict (`speedup_vs_baseline`: paired round by round, so drift common to
both cancels; "same" when the whole interval lies within ±5%). It returns the sentences it prints
and asserts that each says what its verdict and numbers say.
"""),
    code('''
# the passes over rows*cols each variant moves (kernels/*/spec.py): bias_gelu fused reads x and writes out, unfused
# also writes x + bias and reads it back; rmsnorm_residual fused reads x and residual and writes residual_out and
# out, unfused also reads residual_out back (one read more, no extra write)
PASSES = {"bias_gelu": (2, 4), "rmsnorm_residual": (4, 5)}
EXTRA = {"bias_gelu": "it writes x + bias and reads it back",
         "rmsnorm_residual": "it reads residual_out, which both variants write, back"}


def extra_pass(kernel):
    fused, unfused = PASSES[kernel]
    return f"makes an extra pass ({EXTRA[kernel]}: {unfused} passes over the array to the fused kernel's {fused})"


def fusion_why(v, backend, variant, nbytes, other_sizes_slower=False, shares=None):
    """The explanation that fits the verdict, from what is known about the device and the working set.
    ``other_sizes_slower``: the fused variant was also settled slower at the pair's other size (the cache level
    then cannot be why). ``shares``: (fused, unfused in the passes it moves) shares of the stream rate at the DRAM
    size, where a probe measured it: a cause that weighs saved traffic is given only where the traffic can weigh
    (not where both variants stream at under 40% of the stream rate, so neither time is set by its bytes)."""
    llc = last_level_cache_bytes(backend)
    in_cache = bool(llc) and nbytes <= llc
    where = cache_text(nbytes, llc)
    # the level this size was chosen for, named, only where it was chosen so (a quick run's sizes are fixed)
    if llc and nbytes <= llc / 4 and not SMALL:
        where += f" (chosen to fit within a quarter of the {fmt_bytes(llc)} last-level cache)"
    said = reading(v)   # faster / slower / same (whole interval within ±5%) / inconclusive
    if said in ("faster", "slower") and not may_state_cause(v):
        return f"No cause is given for a disturbed comparison ({where})."
    if said == "faster":
        # the most the extra pass can explain, from the pass counts (5 passes to 4 account for 1.25x at most)
        bound = pass_bound_text(v, *PASSES[v["kernel"]])
        if in_cache:
            # what that pass costs in cache (a second loop, a second launch, cache traffic) is not measured here:
            # PoCL's cells run far below any cache's bandwidth, so cache traffic is not what they are said to pay
            # one sentence a finding: a reader met one 60-word sentence of four (issue 39)
            return (f"The unfused variant {extra_pass(v['kernel'])}. The {where}, so that pass need not reach DRAM; "
                    f"which cache level served it, and what it cost, these rows do not measure. "
                    f"{bound[:1].upper()}{bound[1:]}.")
        # whether the bytes decide the time is answered once per kernel, below, from the stream rate (not in SMALL)
        answered = "not answered in this SMALL run" if SMALL else "answered below"
        return (f"The unfused variant {extra_pass(v['kernel'])} ({where}). {bound[:1].upper()}{bound[1:]}. Whether "
                f"those bytes decide the time is {answered}.")
    if said == "same":
        if in_cache:
            return (f"Fusion saved nothing measurable at this size ({where}): the intermediate's round trip does "
                    "not leave the cache here; the DRAM size is where saved bytes can show.")
        return f"The traffic fusion saves did not show above the noise ({where})."
    if said == "slower":
        how = workbench.variants(v["kernel"])[variant].description.split(chr(10))[0]
        fused_passes, unfused_passes = PASSES[v["kernel"]]
        if shares and max(shares) < 0.4:   # neither variant near its bytes' rate: traffic is not what sets either
            reason = (f"not the bytes: at the DRAM size the fused variant streamed at {shares[0]:.0%} of the stream "
                      f"rate and the unfused one at {shares[1]:.0%} (in the {unfused_passes} passes it moves), both "
                      "under 40%, so neither time is set by memory traffic and the traffic fusion saves could not "
                      f"show. What makes the fused kernel slower is its own work, which these rows do not break down "
                      f"({where})")
        elif other_sizes_slower:   # slower in cache and past it: the cache level is not what decides it
            reason = (f"the fused kernel's other costs outweigh the traffic it saves; the {where}, and it was slower "
                      "at the other size too, on the other side of the last-level cache, so where the bytes come "
                      "from is not what decides it")
        else:
            reason = (f"the {where}, so the bytes fusion saves are cheap, and the fused kernel's other costs weigh "
                      "more" if in_cache else f"the fused kernel's other costs outweigh the traffic it saves ({where})")
        return f"Likely why: {reason}. (The fused variant: {how.rstrip('.')}.)"
    # inconclusive or disturbed: no explanation to give, so no cache fact beside it (05 printed "The working set
    # 516 KiB fits in the 32 MiB last-level cache." under verdicts it explained nothing of)
    return ""


FRAMES = []   # every result frame fusion_findings reads (group_of looks a cell's group up in them)


def _rounds_of(r):
    medians = [float(m) for m in json_list(r.get("round_medians_s"))]
    probes = [float(g) for g in json_list(r.get("round_bandwidth_gbs"))]
    return (medians, probes) if medians and len(medians) == len(probes) else ([], [])


def group_of(r):
    # the cells set against one figure per round: every variant of r's backend at r's size (the two sides of each
    # pair among them), so that no pair's sides are divided by different probes: the probe's own swing from one
    # measurement to the next would otherwise read as a difference between the variants
    for df in FRAMES:   # the results fusion_findings has read, each run's own rows
        rows = df[(df["status"] == "ok") & (df["run_id"] == r.get("run_id")) & (df["kernel"] == r.get("kernel"))
                  & (df["backend"] == r["backend"]) & (df["bytes"] == r["bytes"])]
        if len(rows):
            return rows.to_dict("records")
    return [r]


def felt_rounds(r, rate):
    # [(round's GB/s, what it is divided by, round number, the cell's time there over its other rounds')] per round:
    # a round whose probe dipped is set against a probe only where every cell of its group (group_of) ran DIP_FELT
    # (5%) slower there than the median of its undipped rounds (the rule that marks a row, measure/rounds.py), and
    # then against the median of the group's probes in that round, one figure for every side; every other round is
    # set against the run's best probe (the stream rate): a dip a cell did not feel is the probe's, not the cell's
    medians, probes = _rounds_of(r)
    if not medians:
        return []
    group = [_rounds_of(x) for x in group_of(r)]
    aligned = all(len(m) == len(medians) for m, _ in group)
    felt = set.intersection(*(set(felt_dips(m, p)) for m, p in group)) if aligned else set()
    dipped = {i for i, _ in bandwidth_dips(probes)}
    steady = [m for i, m in enumerate(medians) if i not in dipped]
    base = float(np.median(steady)) if steady else None
    out = []
    for i, m in enumerate(medians):
        slow = m / base if i in dipped and base else None
        against = float(np.median([p[i] for _, p in group])) if i in felt else rate
        out.append((float(r["bytes"]) / m / 1e9, against, i + 1, slow))
    return out


def share_of(r, rate):
    # the median over the cell's rounds of its GB/s over what each round is set against; its GB/s over the stream
    # rate where its rounds took no probes
    rounds = felt_rounds(r, rate)
    return float(np.median([g / d for g, d, _, _ in rounds])) if rounds else r["gbps"] / rate


def pair_shares(g, eager, fused, rate):
    # (fused, unfused) shares of the stream rate at the backend's DRAM size, the unfused one in the passes it moves
    # (share_of, the answer below); None where either row is missing
    big = g[g["bytes"] == g["bytes"].max()]
    rows = [big[big["variant"] == x].to_dict("records") for x in (fused, eager)]
    if not all(rows):
        return None
    fused_passes, unfused_passes = PASSES[rows[0][0]["kernel"]]
    return share_of(rows[0][0], rate), share_of(rows[1][0], rate) * unfused_passes / fused_passes


def fusion_findings(res):
    FRAMES.append(res.df)
    ok = res.df[res.df["status"] == "ok"]
    lines, checked = NoteBlock(), 0   # each verdict's head on its line, each reason once in the notes under them
    covered = set()   # the cells a verdict above names as disturbed, with its notes (why, by what, how to rerun)
    for backend, g in ok.groupby("backend", sort=True):
        eager = sorted(set(g.loc[g["mode"] == "eager", "variant"]))
        fused = sorted(set(g.loc[g["mode"].isin(["fused", "compiled"]), "variant"]))
        if not eager or not fused:
            hint = " (torch's fused variant is torch.compile: add 'compiled' to MODES)" if (
                all_backends()[backend].runtime == "torch" and "compiled" not in MODES) else ""
            failed = res.df[(res.df["backend"] == backend) & ~res.df["status"].isin(["ok", "unsupported"])]
            why_not = "".join(f"; {r.variant} {r.status}: {str(r.message).splitlines()[0]}"
                              for r in failed.drop_duplicates("variant").itertuples())
            lines.add(backend, f"only {', '.join(sorted(set(g['variant'])))} ran here: no fused/unfused pair"
                      + hint + why_not)
            continue
        rate = host_bandwidth(ok[ok["bytes"] == ok["bytes"].max()])   # the stream rate the answer below uses
        for f in fused:
            verdicts = pair_verdicts(ok, eager[0], f, backend)
            shares = pair_shares(g, eager[0], f, rate[0]) if rate else None
            slower = [v["size_label"] for _, v in verdicts.iterrows() if may_state_cause(v) and reading(v) == "slower"]
            for _, v in verdicts.iterrows():
                claim = verdict_claim(v, eager[0], f)
                check_claim(v, claim.text())   # the whole sentence, and the head printed on its line
                check_claim(v, claim.head)
                nbytes = float(g.loc[g["size_label"] == v["size_label"], "bytes"].iloc[0])
                why = fusion_why(v, backend, f, nbytes, any(s != v["size_label"] for s in slower), shares)
                # the explanation's branch matches the verdict, and the cache fact it cites the device's
                if may_state_cause(v):
                    check_claim(v, why, {"faster": "makes an extra pass", "slower": "Likely why"})
                assert may_state_cause(v) or ("extra pass" not in why and "Likely why" not in why), why
                llc = last_level_cache_bytes(backend)
                # every explanation given places the working set, as the device's cache says; only a verdict with
                # nothing to explain (inconclusive, disturbed) gets none
                assert bool(why) == (reading(v) in ("faster", "slower", "same")), (reading(v), why)
                assert not why or ("fits in" in why) == bool(llc and nbytes <= llc), why
                # a finding of a SMALL run's one check size says so (tutorial.of_small_sizes), once under the list
                if SMALL:
                    lines.footnote(tutorial.of_small_sizes(v["size_label"]))
                if rests_on_disturbed(v):
                    covered |= {(x, backend, v["size_label"]) for x in (eager[0], f)}
                lines.add(f"{backend}, {v['size_label']}", Claim(f"on this machine {claim.head}", claim.reasons))
                if why:
                    lines.add("", f"  {why}")   # the explanation that fits the verdict, under its line
                checked += 1
    pairs = ok.groupby("backend")["mode"].agg(lambda m: "eager" in set(m) and bool({"fused", "compiled"} & set(m)))
    assert checked >= int(pairs.astype(bool).sum()), "every backend with a fused/unfused pair gets a verdict"
    pocl = [b for b in sorted(set(ok["backend"]))
            if all_backends()[b].runtime == "opencl" and workbench.device_info(b).get("kind") == "cpu"]
    if pocl:
        lines.footnote(f"({', '.join(pocl)}: PoCL runs the OpenCL kernels on this CPU's cores; it checks that they "
                       "are correct, and its timings say nothing about a GPU.)")
    crossed = {(r["variant"], r["backend"], r["size_label"]) for r in ok.to_dict("records") if quartiles_wide(r)}
    # every crossed cell named above with its notes (how the figure draws it, by what, the rerun): not said again;
    # 05 printed notes [4]-[7] and then the same in a line of its own
    # (else the figure's crosses, named: no sentence above reads a ratio from them)
    if not crossed <= covered and disturbed_cells_text(ok):
        lines.footnote(disturbed_cells_text(ok) + ".")
    # the shared-machine advice is said once, under the last kernel's verdicts, for both (advise_once)
    print(lines)
    return lines.render()
'''),
    md("""
## bias + GELU
"""),
    code("""
# from this machine's caches: a working set within a quarter of the last-level cache, and one near twice it (whole
# rows of 2048 floats, so a little under), so the bytes fusion saves come from DRAM there. The cache size is the
# last-level cache's, not half the per-core cache's: a call there takes 15-30 us, and its fixed costs (a call,
# waking numba's threads) can make a fused kernel read slower in cache than from DRAM, which says nothing of its bytes.
# SMALL: one check size, 64x1024, in every cache: no DRAM size, so the stream-rate answers below are skipped
def two_sizes(kernel):
    return [(64, 1024)] if SMALL else [(p["rows"], p["cols"])
                                       for p in tutorial.cache_and_dram_sizes(kernel, in_cache="llc")]

sizes = two_sizes("bias_gelu")
caches = tutorial.machine_caches()
print(f"bias_gelu at {', '.join(f'{r}x{c}' for r, c in sizes)} (per-core cache "
      f"{fmt_bytes(caches.per_core or 0)}, last-level cache {fmt_bytes(caches.llc or 0)})")
# numpy as most people write it, and the runtimes with a fused kernel (torch's is torch.compile); FULL: every backend
quick = ("numpy", "numba", "opencl") + (("torch-cpu",) if "compiled" in MODES else ())
backends = tutorial.backends_for(FULL, quick)
gelu = workbench.benchmark(kernel="bias_gelu", backends=backends, sizes=sizes, mode=MODES, budget_s=BUDGET_S,
                           store=STORE, progress=False)
gelu
"""),
    code("""
gelu.plot(metric="time")
""", "figure"),
    code("""
gelu_findings = fusion_findings(gelu)
"""),
    md("""
The table puts each fused variant's verdict beside the numbers it rests on: `speed-up (paired)` is the paired
per-round speed-up over the unfused variant of its own backend, the one statistic the sentences above quote,
with its interval; `median time` and `GB/s` are each cell's own headline, for reading the sizes, not a second
estimate of the ratio (each side's median comes from its own samples, so their ratio can differ from the paired
figure within its interval; where it falls outside, the verdict reads "not settled"). A speed-up past ±50% is
not printed: the verdict reads "disturbed", as its sentence does. A verdict "inconclusive" (README's word: the
noise was too large to tell) is the sentence's "could not tell". A cell the figure draws as an x (its quartiles
half its median or more apart) reads "disturbed" in `median time` and `noisy`, with no time or rate to read, and
a verdict resting on it reads "disturbed" with no speed-up. `noisy` names why a cell is marked, by the rule
every row's mark follows: its round medians scatter by more than 10% (a robust one-sigma spread of their logs,
leaving out a round set aside because the host's speed probe read it slow; with one round, its samples' spread),
or its rounds fall in two groups (bimodal), or a round felt a dip of the host's memory bandwidth, or other
processes used more than 25% of the CPU while it ran; an unmarked cell met none, and a set-aside round is named
in its column too. Whether the bytes fusion saves are what its speed-up buys is a separate question, answered
once per kernel under each table from the stream rate (in a full-size run; a `SMALL` run has no DRAM size and
says there that it does not answer it).
"""),
    code("""
def noisy_why(row):
    # the reason a row's noisy mark rests on, as measure.rounds wrote it; an unmarked row whose round was set aside
    # says so too (its rounds shown elsewhere include that round); a disturbed cell (the figure's x) says that first
    note = row.get("noise_note") if isinstance(row.get("noise_note"), str) else ""
    if quartiles_wide(row):
        return "disturbed (the figure's x)" + (f"; noisy: {note}" if is_noisy(row) and note else "")
    if is_noisy(row):   # the stored flag, as every table and figure reads it
        return f"noisy: {note}" if note else "noisy"
    return f"not noisy ({note})" if note else ""


def time_vs_unfused(res):
    ok = res.df[res.df["status"] == "ok"]
    # a cell the figure draws as an x (quartiles half its median or more apart) reads "disturbed": no median, no rate
    crossed = [quartiles_wide(r) for r in ok.to_dict("records")]
    out = pd.DataFrame({"variant": ok["variant"], "backend": ok["backend"], "mode": ok["mode"],
                        "size_label": ok["size_label"],
                        "median time": ["disturbed" if c else fmt_seconds(m) for c, m in zip(crossed, ok["median_s"])],
                        "GB/s (median)": ["" if c else f"{g:.1f}" for c, g in zip(crossed, ok["gbps"])],
                        # the mark with its reason (the row's noise_note), so it follows from the rule stated above
                        "noisy": [noisy_why(r) for r in ok.to_dict("records")]})
    judged = []
    for backend, g in ok.groupby("backend", sort=True):
        eager = sorted(set(g.loc[g["mode"] == "eager", "variant"]))
        for f in sorted(set(g.loc[g["mode"].isin(["fused", "compiled"]), "variant"])) if eager else []:
            t = pair_verdicts(ok, eager[0], f, backend)
            # cells_disturbed: a pair resting on a disturbed cell reads "disturbed", as its sentence does; basis: one
            # left too few rounds at speed reads that instead (no disturbance), as its sentence does
            judged.append(t.assign(backend=backend)[["variant", "backend", "size_label", "speedup", "ci_low",
                                                      "ci_high", "verdict", "cells_disturbed", "basis"]])
    if not judged:
        return out
    table = shown_verdicts(pd.concat(judged))
    # at the precision the sentences above print it (claims.table_ratio): one statistic, one precision
    x = [table_ratio(*r) if pd.notna(r[0]) else "" for r in zip(table["speedup"], table["ci_low"], table["ci_high"])]
    table = pd.DataFrame({"variant": table["variant"], "backend": table["backend"], "size_label": table["size_label"],
                          "speed-up (paired)": x,
                          "interval": [interval_text(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
                          "verdict": table["verdict"]})
    return out.merge(table, on=["variant", "backend", "size_label"], how="left").fillna("")


def stream_rate(big):
    # the rate this machine's memory gives a plain stream, never one measured in disturbed rounds: the best of the
    # host-bandwidth probes the rounds took (a probe that read low gave less than the memory can)
    probe = host_bandwidth(big)
    if probe is not None:
        return probe[0], f"the host's copy bandwidth, best of the {probe[1]} probes taken before these rounds"
    stream = workbench.benchmark(kernel="saxpy", backends=["numpy"], sizes=[{"n": int(big["bytes"].max()) // 12}],
                                 budget_s=BUDGET_S, store=STORE, progress=False).df
    s = stream[stream["status"] == "ok"]
    rounds = [min(json_list(m)) for m in s["round_medians_s"].dropna()]   # its fastest round, not a disturbed one
    return (float(s["bytes"].iloc[0]) / min(rounds) / 1e9, "saxpy's fastest round at the same working set (these "
            "rows took no bandwidth probe)")


def band_said(share, unfused, flat):
    # three bands, said as such: at 70% or more of the rate the memory gives a plain stream the bytes can set
    # the time; under 40% they do not for a fused variant; between, the kernel is bound by more than its bytes.
    # An unfused variant's share counts its compulsory bytes only, a lower bound of what it moves, so under 40%
    # it is not said to be set by something else. Returns the words and the answer's list the variant joins.
    if share >= 0.7:
        return "near the stream rate (70% or more)" + ("" if flat else ": here the bytes can decide the time"), (
            "loop" if flat else "near")
    if share >= 0.4:
        return "below the stream rate (40-70%)" + (
            "" if flat else ": the bytes are part of its time, not all of it"), "loop" if flat else "part"
    if unfused:
        return ("well below the stream rate (under 40%) in compulsory bytes, a lower bound of what an unfused "
                "variant moves"), "loop" if flat else "low_unfused"
    # a fused variant this far below the rate is not set by its bytes, whatever the cache did: "low" even if flat
    return "well below the stream rate (under 40%): the compulsory bytes alone do not set its time", "low"


def cache_vs_dram(in_cache, dram):
    # the direction the two figures show, in the words that say it: "slower" where the cache's GB/s is the lower
    # one, the gain otherwise; the gain is taken from the figures as printed beside it (gbps_text), so the
    # percentage follows from the two numbers a reader sees
    gain = float(gbps_text(in_cache)) / float(gbps_text(dram)) - 1
    if gbps_text(in_cache) == gbps_text(dram) or round(100 * gain) == 0:
        return "no faster"
    return "slower" if gain < 0 else f"only {gain:.0%} faster"


def gbps_text(x):
    # a rate with three significant figures (0.853, 27.9, 112): "0.9" and "0.8" could not carry the ratio said
    return f"{x:.3g}"


def above_probe_text(rows, rate, kernel):
    # what a share above 100% shows, from the numbers only: the variant drew more than the best probe's copy did
    # (the probe is one thread's np.copyto of one array, a reference rate, not the memory's ceiling); an unfused
    # variant is named with the share of the bytes it moves, its extra passes included
    fused_passes, unfused_passes = PASSES[kernel]

    def name(r):
        share = share_of(r, rate)
        if r["mode"] != "eager":
            return f"{r['variant']} on {r['backend']} ({share:.0%})"
        return (f"{r['variant']} on {r['backend']} ({share:.0%} in compulsory bytes, "
                f"{share * unfused_passes / fused_passes:.0%} in the {unfused_passes} passes it moves)")

    return ("(Above 100% of the stream rate: " + ", ".join(name(r) for r in rows) + ". The stream rate is one "
            "thread's copy of one array, a reference rate, not the memory's ceiling: a share above 100% says this "
            "variant drew more bytes a second than that copy did, not more than the memory can give.)")


def bytes_test(res, kernel, big, near):
    # [(line, variant names, "part" | "untested")] for each backend with a variant near the rate at the DRAM size:
    # if the bytes alone set the time, fusion buys the ratio of the passes each moves, and a bytes-bound claim must
    # agree with the pair's measured interval. Where the interval excludes that ratio the bytes are part of the time,
    # not all of it ("part"); where the pair cannot be read (disturbed, or its medians or rounds disagree) the claim
    # is said untested ("untested"). For example, "1.1x faster (interval 1.0x-1.2x)" excludes the 1.25x that five
    # passes over four predict, so there the bytes cannot be all of the time.
    out = []
    fused_passes, unfused_passes = PASSES[kernel]
    expect = unfused_passes / fused_passes
    ok = res.df[res.df["status"] == "ok"]
    for backend, g in big.groupby("backend"):
        eager = sorted(set(g.loc[g["mode"] == "eager", "variant"]))
        fused = sorted(set(g.loc[g["mode"] == "fused", "variant"]))
        names = [f"{x} on {backend}" for x in eager[:1] + fused[:1]]
        if not eager or not fused or not any(n in near for n in names):
            continue
        pair = pair_verdicts(ok[ok["bytes"] == big["bytes"].max()], eager[0], fused[0], backend)
        if pair.empty:
            continue
        v = pair.iloc[0]
        predicted = (f"{fused[0]} on {backend} moves {fused_passes} passes to {eager[0]}'s {unfused_passes}: if the "
                     f"bytes alone set the time it would run {expect:.2f}× faster")
        if is_disturbed(v["floor"]) or rests_on_disturbed(v) or not (np.isfinite(v["ci_low"])
                                                                      and np.isfinite(v["ci_high"])):
            # too few rounds left at speed to pair is said as that, never as "disturbed" (its verdict line says so)
            why = ("rests on too few rounds at speed" if is_disturbed(v["floor"]) and not rests_on_disturbed(v)
                   and not reads_disturbed(v["floor"], v.get("basis")) else "was disturbed")
            out.append((f"{predicted}; their speed-up, which would test that, {why}, so these rows do not "
                        "say whether the bytes alone set the time", names, "untested"))
            continue
        if v["ci_low"] <= expect <= v["ci_high"]:
            continue   # as the bytes predict: the bands above stand
        lo, hi = v["ci_low"], v["ci_high"]
        said = f"{table_ratio(v['speedup'], lo, hi)} ({interval_name(v)} {interval_text(lo, hi)})"
        if medians_disagree(v) or v.get("bimodal_note"):
            out.append((f"{predicted}; the paired speed-up, {said}, excludes that, but its cells' own rounds "
                        "disagree with it, so these rows do not say whether the bytes alone set the time", names,
                        "untested"))
            continue
        out.append((f"{predicted}; its paired speed-up was {said}, which excludes {expect:.2f}×, so the bytes are "
                    f"part of the time, not all of it (and {eager[0]}'s share counts {fused_passes} of its "
                    f"{unfused_passes} passes)",
                    names, "part"))
    return out


def bytes_answer(res, kernel):
    # the title's question at the DRAM size: the time follows the bytes only if the kernel streams near the
    # rate this machine's memory gives a plain stream
    ok = res.df[res.df["status"] == "ok"]
    big = ok[ok["bytes"] == ok["bytes"].max()]
    rate, what = stream_rate(big)
    print(f"{kernel} at {fmt_bytes(float(big['bytes'].max()))} of compulsory bytes; stream rate {rate:.1f} GB/s "
          f"({what}); each round of a cell is set against the stream rate, or, where that round's probe dipped and "
          f"every variant of its backend ran {DIP_FELT - 1:.0%} or more slower in it than in its other rounds, "
          "against the median of their probes there (one figure for both sides of a pair):")
    near, part, loop, low, low_unfused, disturbed = [], [], [], [], [], []
    small = ok[ok["bytes"] == ok["bytes"].min()]
    for r in big.sort_values("gbps", ascending=False).to_dict("records"):
        if quartiles_wide(r):   # the one cell rule: the figure's x, the table's "disturbed"
            # a cell whose quartiles span ±50% of its median has no rate to read (the table says "disturbed", the
            # figure draws an x): no share or band is read from it
            disturbed.append(f"{r['variant']} on {r['backend']}")
            print(f"  {disturbed[-1]}: disturbed (its quartiles lie half its median or more apart): no share is read")
            continue
        # one share, printed with what it divides: per round, the round's GB/s over the stream rate, or over the
        # round's own probe where the cell felt that round's dip (felt_rounds); then the median over the rounds
        rounds = felt_rounds(r, rate)
        share = share_of(r, rate)
        per_round = ", ".join(f"{g:.1f}/{d:.1f}" for g, d, _, _ in rounds)
        # each round's ratio with the digits that show its side of the DIP_FELT threshold (1.049 prints as
        # "1.049×", not as a "1.05×" that would read as on the threshold)
        felt = [f"round {i} ({d:.1f} GB/s; the cell {mark_text(x, DIP_FELT)} its other rounds' time)"
                for _, d, i, x in rounds if d != rate]
        unfelt = [f"round {i} ({mark_text(x, DIP_FELT)})" for g, d, i, x in rounds if x is not None and d == rate]
        shares = (f"{share:.0%} of the stream rate (the median over its rounds of GB/s over what each is set "
                  f"against: {per_round})" if rounds else f"{share:.0%} of the stream rate (its rounds took no probe)")
        note = ""
        if felt:
            note += ("; set against its backend's dipped probe (the median of its variants' probes there): "
                     f"{', '.join(felt)}")
        if unfelt:
            note += (f"; a dipped probe not every variant of its backend ran {DIP_FELT - 1:.0%} or more slower in, so "
                     f"set against the stream rate: {', '.join(unfelt)}")
        name = f"{r['variant']} on {r['backend']}"
        cached = small[(small["variant"] == r["variant"]) & (small["backend"] == r["backend"])]
        in_cache = float(cached["gbps"].iloc[0]) if len(cached) else None
        # in every band: a variant no faster with its working set in cache than from DRAM does not show that the
        # memory sets any of its time (its loop may run at that pace wherever its bytes come from)
        flat = in_cache is not None and in_cache <= 1.2 * r["gbps"]
        said, bucket = band_said(share, r["mode"] == "eager", flat)
        if flat:
            said += (f", and {cache_vs_dram(in_cache, r['gbps'])} with its working set in cache "
                     f"({gbps_text(in_cache)} GB/s at {fmt_bytes(float(cached['bytes'].iloc[0]))}, "
                     f"{gbps_text(r['gbps'])} from DRAM): these rows do not show that the memory sets its time")
        {"near": near, "part": part, "loop": loop, "low": low, "low_unfused": low_unfused}[bucket].append(name)
        print(f"  {name}: {r['gbps']:.1f} GB/s (median), {shares}: {said}" + (f" ({note[2:]})" if note else ""))
    # above the probe's rate: in compulsory bytes, or in the bytes an unfused variant moves (its extra passes too)
    fused_passes, unfused_passes = PASSES[kernel]
    above = [r for r in big.to_dict("records")
             if share_of(r, rate) * (unfused_passes / fused_passes if r["mode"] == "eager" else 1.0) > 1]
    if above:
        print("  " + above_probe_text(above, rate, kernel))
    # where a fused and an unfused variant both sit near the rate, the pair's settled verdict tests the bytes: if
    # they alone set the time, fusion buys the ratio of the passes each moves; a speed-up that falls short of it
    # says the bytes are not all of the time
    untested = []
    for line, names, bucket in bytes_test(res, kernel, big, near):
        print("  " + line)
        moved = [n for n in names if n in near]   # the claim the line tests is the near band's
        near = [n for n in near if n not in names]
        (part if bucket == "part" else untested).extend(n for n in moved if n not in part)
    parts = []
    if near:
        parts.append(f"the bytes can decide the time for {', '.join(near)} (70% or more of the stream rate)")
    if part:
        parts.append(f"{'they' if near else 'the bytes'} are part of the time, not all of it, for "
                     f"{', '.join(part)} (40-70%)")
    if untested:
        parts.append(f"{', '.join(untested)} streamed at 40% or more of it, but their fused/unfused speed-up does not "
                     "test whether the bytes alone set their time (the line above says why)")
    if loop:
        parts.append(f"{', '.join(loop)} streamed no more than 20% faster from the cache than from DRAM (each "
                     "line above says by how much, or that it was slower), so whether the memory or its own loop "
                     "sets its time is not shown")
    if low:
        parts.append(f"{', '.join(low)} ran under 40% of it, where something besides the bytes sets the time")
    if low_unfused:
        parts.append(f"{', '.join(low_unfused)} ran under 40% of it in compulsory bytes, a lower bound of the "
                     "traffic an unfused variant moves, so these rows do not say what sets its time")
    if disturbed:
        parts.append(f"{', '.join(disturbed)} {'was' if len(disturbed) == 1 else 'were'} disturbed, so these rows "
                     "say nothing of what sets their time (a rerun while the machine is otherwise idle could)")
    print(f"Answer for {kernel}: " + "; ".join(parts) + ". These rates count the compulsory bytes only: the "
          f"unfused variant {extra_pass(kernel)}, so it moves more than its line says, and its share of the stream "
          "rate is a lower bound.")

time_vs_unfused(gelu)
"""),
    md("""
**Do the bytes decide the time?** Only if the kernel moves its bytes near the rate the memory gives a plain
stream. A full-size run answers it once per kernel at the DRAM size: each variant's GB/s of its compulsory bytes
as a share of the host's stream rate, probed before each round (`round_bandwidth_gbs`), with each round's figure
over the probe it was divided by (a dipped round's own probe, where the cells felt the dip; else the run's best).
An unfused variant's share counts only its compulsory bytes, a lower bound of what it moves. A `SMALL` run has no
DRAM size and says so below.
"""),
    code("""
if not SMALL:
    bytes_answer(gelu, "bias_gelu")
else:
    print(tutorial.skipped_in_small("no DRAM size, so the stream-rate question (do the bytes decide bias_gelu's "
                                    "time?) is not answered here"))
if bandwidth_down_text(gelu.df):
    print(f"(Of these cells: {bandwidth_down_text(gelu.df)}.)")
"""),
    md("""
## RMSNorm with the residual add
"""),
    code("""
norm = workbench.benchmark(kernel="rmsnorm_residual", backends=backends, sizes=two_sizes("rmsnorm_residual"),
                           mode=MODES, budget_s=BUDGET_S, store=STORE, progress=False)
norm_findings = fusion_findings(norm)
# said once for both kernels (05 printed it under each), over every row either kernel's verdicts rest on
every = pd.concat(FRAMES)
if shared_machine_advice(every[every["status"] == "ok"]):
    print(f"({shared_machine_advice(every[every['status'] == 'ok'])} This holds for both kernels' verdicts.)")
time_vs_unfused(norm)
"""),
    md("""
The same question for RMSNorm at its DRAM size, against the same kind of stream rate:
"""),
    code("""
if not SMALL:
    bytes_answer(norm, "rmsnorm_residual")
else:
    print(tutorial.skipped_in_small("no DRAM size, so the stream-rate question (do the bytes decide "
                                    "rmsnorm_residual's time?) is not answered here"))
if bandwidth_down_text(norm.df):
    print(f"(Of these cells: {bandwidth_down_text(norm.df)}.)")
"""),
    code("""
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

fig = norm.plot(metric="gbps")
for ax in fig.axes:   # a log GB/s axis: label 1, 2 and 5 of each decade, not the decades alone
    if ax.get_yscale() == "log":
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda s, pos: f"{s:,.4g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
fig
""", "figure"),
]

"""Tutorial: where an LLM decode step spends its time — attention against the KV cache, and the MLP block's
launches in eager, graph and fused modes, with the execution cache's statistics."""

from _cells import code, md, params

CELLS = [
    md("""
# Where decode time goes

A decode step adds one token per sequence. Two parts of each decoder layer dominate it:

1. **attention against the KV cache**: one query row per head reads every cached key and value, so its
   cost grows with the cache length *L*;
2. **the MLP block** (rmsnorm → gate/up projections → SwiGLU → down projection + residual): five kernels,
   three of which multiply a single row by a weight matrix (gate, up, down), reading every weight once per
   token for two FLOPs each. Whether that reading is bound by memory depends on where the weights live:
   section 2 prints their size against this machine's caches. At small widths the launches themselves are a
   visible share of the time.

This notebook measures both at the shapes of a real model (Qwen2.5-0.5B: hidden 896, intermediate 4864,
14 query heads sharing 2 KV heads of width 64), on the CPU backends this machine has, for one layer and one
sequence: both parts repeat once per layer (24 in this model), so their shares of a step are the shares of one
layer. The KV-cache lengths come from this machine's caches (the longest one's cache is twice the last-level
cache, so it streams from DRAM); `FULL = True` adds lengths up to 32768 tokens, more rounds and torch.compile.
It then compares the block's three execution modes — `eager`, `graph` (recorded once per
shape, replayed) and `fused` — and reads the execution cache's statistics that every such row carries.
"""),
    params("""
SMALL = False      # True: tiny sizes, only to check that the notebook runs (the tests)
FULL = False       # True: the MLP in 5 rounds with torch.compile, the KV cache up to 32768 tokens (several
                   # minutes)
BUDGET_S = 0.2     # timing budget per measured cell, in seconds
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.report.claims import (busy_text, check_claim, host_bandwidth, may_state_cause, own_rounds_share,
                                     pair_verdicts, reading, verdict_sentence)

import json

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from workbench.core.datasets import llm_shapes
from workbench.core.units import fmt_bytes, fmt_seconds, fmt_tick_time
from workbench.judge.compare import speedup_vs_baseline
from workbench.report.plots.series import mark_noisy, noisy_legend, noisy_mask

tutorial.begin(FULL)

model = llm_shapes(["qwen2.5-0.5b"]).iloc[0]
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
# the KV cache holds 2 (K and V) x kv_heads x head_dim float32 per token; the longest length's cache is this
# machine's DRAM working set (twice its last-level cache), so it is read from memory, not from a cache.
# SMALL (the tests): 256 to 4096 tokens only.
caches = tutorial.machine_caches()
per_token = 2 * kv_heads * head_dim * 4
past_llc = -(-caches.dram // per_token // 256) * 256
kv_lens = ([256, 1024, 4096] if SMALL else sorted({512, 2048, 8192, 32768, past_llc}) if FULL
           else [256, 4096, past_llc])
decode_variants = [v for v, b in (("numpy-naive", "numpy"), ("numba-flash", "numba"), ("torch-sdpa", "torch-cpu"))
                   if b in cpu_backends]
decode = workbench.benchmark(
    "attention_decode", variants=decode_variants, backends=cpu_backends, budget_s=BUDGET_S,
    sizes=[{"batch": 1, "heads": heads, "kv_heads": kv_heads, "kv_len": L, "head_dim": head_dim} for L in kv_lens],
    progress=False, name="tutorial 10: attention decode vs KV length")
d = decode.df[decode.df["status"] == "ok"].copy()
d["kv_len"] = [json.loads(p)["kv_len"] for p in d["params"]]
d["KV cache"] = (d["kv_len"] * per_token).map(fmt_bytes)
d["median"] = d["median_s"].map(fmt_seconds)
print(f"last-level cache: {fmt_bytes(caches.llc) if caches.llc else 'unknown'}")
d[["variant", "backend", "kv_len", "KV cache", "median", "gbps"]].sort_values(["variant", "kv_len"]).rename(
    columns={"gbps": "GB/s"})
"""),
    code("""
fig, ax = plt.subplots(figsize=(7, 4))
n_noisy = 0
for i, (variant, g) in enumerate(d.sort_values("kv_len").groupby("variant")):
    ax.loglog(g["kv_len"], g["median_s"], "o-", color=f"C{i}", label=variant)
    noisy = noisy_mask(g)   # the library plots' marker: a hollow ring over each noisy cell
    mark_noisy(ax, g["kv_len"][noisy], g["median_s"][noisy], f"C{i}")
    n_noisy += int(noisy.sum())
noisy_legend(ax, n_noisy)
ax.set_xticks(kv_lens, [f"{L:,}" for L in kv_lens])   # the measured lengths, nothing in between
ax.xaxis.set_minor_locator(NullLocator())
ax.set_xlabel("KV-cache length L (tokens)")
ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))   # ticks in readable units: "20 µs", "1 ms"
ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick_time(v)))
ax.yaxis.set_minor_formatter(NullFormatter())
ax.set_ylabel("attention time per decode step (median)")
ax.set_title(f"attention decode, {heads} heads / {kv_heads} KV heads, head_dim {head_dim}, float32")
ax.legend()
plt.show()
""", "figure"),
    code("""
first, last = min(kv_lens), max(kv_lens)
for variant, g in d.groupby("variant"):
    t = g.set_index("kv_len")["median_s"]
    if first not in t or last not in t:
        continue
    growth = t[last] / t[first]
    slope = np.log(growth) / np.log(last / first)
    # a cache 16x (or 64x) longer must cost more time; a run where it did not was disturbed (a busy machine:
    # the tests run this beside other jobs), and the line says so instead of reading a shape into it
    # the exponent read against the linear growth the text below explains (1 = time in proportion to L)
    shape = ("no growth: this run was disturbed (a busy machine, or too few rounds); rerun it before reading "
             "anything into these times" if growth <= 1 else
             "close to linear" if 0.8 <= slope <= 1.25 else
             "less than linear: fixed costs still weigh at these lengths" if slope < 0.8 else
             "more than linear: longer caches cost more per token here (a working set leaving a cache level, "
             "or a busy machine)")
    steps = t.sort_index()
    falls = [f"L={a}->{b}" for a, b in zip(steps.index[:-1], steps.index[1:]) if steps[b] < steps[a]]
    if falls and growth > 1:   # a longer cache cannot take less time: no shape (and no cause) is read from this
        shape = (f"not read: the time fell from {', '.join(falls)}, which a longer cache cannot cause, so noise "
                 "moved these medians; more rounds or a quieter machine would settle the shape")
    print(f"{variant}: {last // first}x the cache took {growth:.1f}x the time (time ~ L^{slope:.2f}, {shape})")
# what the figure shows, said: which variant had the lowest median at each length, and whether the verdict
# (the others paired round by round against it) settles that it was faster
lowest = d.loc[d.groupby("kv_len")["median_s"].idxmin()].set_index("kv_len")
settled = []
for L, row in lowest.iterrows():
    at = decode.df[decode.df["cell_key"].isin(d.loc[d["kv_len"] == L, "cell_key"])]
    judged = speedup_vs_baseline(at, baseline_variant=row["variant"], baseline_backend=row["backend"])
    said = []
    for _, v in judged[judged["verdict"] != "baseline"].iterrows():
        sentence = verdict_sentence(v, row["variant"], v["variant"])
        check_claim(v, sentence)
        said.append((reading(v), sentence))
    settled.append(all(r == "slower" for r, _ in said))
    print(f"L={L:,}: {row['variant']} had the lowest median ({fmt_seconds(row['median_s'])}); "
          + "; ".join(sentence for _, sentence in said))
if lowest["variant"].nunique() == 1:
    print(f"{lowest['variant'].iloc[0]} had the lowest median at every cache length measured here; "
          + ("the verdicts settle it at every length" if all(settled) else
             f"the verdicts settle that it was faster than both others at {sum(settled)} of {len(settled)} lengths "
             "only, so elsewhere this is a reading of medians, not a finding"))
"""),
    code("""
# numba-flash splits the cache across the cores; does that beat numpy's plain materialised scores? Said from
# the paired verdicts only: "beyond the noise" where the verdict is settled (may_state_cause), else not settled
if {"numba-flash", "numpy-naive"} <= set(d["variant"]):
    by = {"faster": [], "slower": [], "not settled": []}
    for L in kv_lens:
        at = decode.df[decode.df["cell_key"].isin(d.loc[d["kv_len"] == L, "cell_key"])]
        judged = speedup_vs_baseline(at, baseline_variant="numpy-naive", baseline_backend="numpy")
        flash = judged[judged["variant"] == "numba-flash"]
        for v in flash.to_dict("records"):
            by[reading(v) if may_state_cause(v) else "not settled"].append(f"{L:,}")
    import numba

    cores = numba.get_num_threads()
    print(f"numba-flash ({cores} threads) against numpy-naive: "
          + "; ".join(f"{'ran faster' if k == 'faster' else 'was slower' if k == 'slower' else k} at L={', '.join(v)}"
                      + (" (beyond the noise)" if k != "not settled" else "") for k, v in by.items() if v)
          + (f"; this run shared the machine: {busy_text(d)}" if busy_text(d) else ""))

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
          f"the host's copy bandwidth: {probe[0]:.1f} GB/s (best of {probe[1]} probes taken before these rounds)")
    for r in far[far["kv_len"] == L].sort_values("gbps", ascending=False).to_dict("records"):
        own = own_rounds_share(r)
        share = own if own is not None else r["gbps"] / probe[0]
        against = "of its own rounds' probes" if own is not None else "of the best probe"
        print(f"  {r['variant']}: {r['gbps']:.1f} GB/s (median), {share:.0%} {against}: "
              + ("near the memory's rate: reading the cache is what its time is" if share >= 0.7 else
                 "well below the memory's rate: the bytes alone do not set its time"))
"""),
    md("""
Attention decode reads the whole cache for every generated token, so its time follows the cache length.
Where fixed costs (launch, Python, thread start-up) still weigh, it grows less than linearly; once they stop
mattering, in proportion to L; faster than that where a longer cache leaves a cache level. The lines above
say which each variant showed here. The quick run's longest cache is twice the last-level cache, so each
step reads it from DRAM: there the last lines set each variant's GB/s against the host's copy bandwidth,
probed before each of its rounds (05 explains the probe), to say whether reading the cache is what the time
is (a run without such a length says so instead).

## 2. The MLP block: eager, graph and fused

At decode the MLP block multiplies a single row by three weight matrices. What each mode means on each
backend is in the README ("Execution modes"): on numpy and torch-cpu `graph` is a pre-planned sequence of
`out=` calls into preallocated buffers (no allocation, no per-call planning); on numba it is one compiled
driver for the whole block; `fused` is torch.compile on torch and fused kernels elsewhere. torch.compile
takes a minute or more to compile on a busy 2-core machine, so the quick run leaves `torch-fused` out
(`FULL = True` measures it).
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
every["time"] = [fmt_seconds(r.median_s) if r.status == "ok" else r.status for r in every.itertuples()]
m = every[every["status"] == "ok"]
print("\\n".join(f"{r.variant} on {r.backend}: {r.message}" for r in every.itertuples() if r.status == "unsupported"))
weights = 3 * hidden * intermediate * 4   # gate, up and down, float32
llc = tutorial.machine_caches().llc
print(f"the block's weights: {fmt_bytes(weights)} (3 matrices of {hidden} x {intermediate} float32); "
      + (f"they fit in the {fmt_bytes(llc)} last-level cache, so after the first call the block reads them from "
         "cache, not DRAM: its time here is not DRAM bandwidth" if llc and weights <= llc else
         f"they exceed the {fmt_bytes(llc)} last-level cache: every call streams them from DRAM" if llc else
         "the last-level cache size is unknown here"))
print("median time per call (each cell's own rounds; the verdicts below are paired):")
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
    code("""
sentences, readings = [], {}
for backend, g in m.groupby("backend"):
    names = dict(zip(g["mode"], g["variant"]))
    for other in ("graph", "fused"):
        if "eager" not in names or other not in names:
            continue
        verdicts = pair_verdicts(mlp.df, names["eager"], names[other], backend)
        for _, v in verdicts.iterrows():
            sentence = verdict_sentence(v, names["eager"], names[other])
            check_claim(v, sentence)
            sentences.append(f"{backend}: {sentence}")
            readings.setdefault(other, []).append((backend, reading(v)))
print("\\n".join(sentences))
for other, said in readings.items():   # what the paragraph below may say, from these verdicts
    wins = sorted({b for b, s in said if s == "faster"})
    print(f"{other} beat eager beyond the noise on {', '.join(wins)}" if wins else
          f"{other} did not beat eager beyond the noise on any backend here")
# across runtimes: each runtime's eager block against numpy's (one statistic: the paired speed-up)
across = speedup_vs_baseline(m[m["mode"] == "eager"], baseline_variant="numpy-eager", baseline_backend="numpy")
for _, v in across[across["verdict"] != "baseline"].iterrows():
    sentence = verdict_sentence(v, "numpy-eager @ numpy", f"{v['variant']} @ {v['backend']}")
    check_claim(v, sentence)
    print(sentence)
if busy_text(m):   # the floors above are this run's: say when it shared the machine
    print(f"(This run shared the machine: {busy_text(m)}.)")
# what the table's medians show for graph against eager, and how far the verdicts above settle it
t = m.pivot(index="backend", columns="mode", values="median_s")
if {"eager", "graph"} <= set(t.columns):
    pairs = t[["eager", "graph"]].dropna()
    shown = {b: (fmt_seconds(pairs.loc[b, "graph"]), fmt_seconds(pairs.loc[b, "eager"])) for b in pairs.index}
    # longer as printed: two medians that print alike are not called apart
    longer = [b for b in pairs.index if shown[b][0] != shown[b][1] and pairs.loc[b, "graph"] > pairs.loc[b, "eager"]]
    medians = ", ".join(f"{b} {g} vs {e}" for b, (g, e) in shown.items())
    words = {"faster": "graph faster", "slower": "graph slower", "same": "the same within ±5%",
             "inconclusive": "not settled", "no call": "no call"}
    verdicts = ", ".join(f"{b}: {words[r]}" for b, r in readings.get("graph", []))
    settled_graph = [b for b, r in readings.get("graph", []) if r in ("faster", "slower")]
    print(f"By the medians (graph vs eager: {medians}) graph took longer than eager on {len(longer)} of "
          f"{len(pairs)} backends; the paired verdicts above read {verdicts}: "
          + ("so only there is a direction a finding" if settled_graph else
             "none settles a direction, so the medians' order is not a finding"))
"""),
    md("""
Each sentence above is the package's paired verdict (blocks timed side by side in one visit, or interleaved
rounds), with its noise floor: "faster" only when the whole interval clears it, and "not settled" where the
paired figure and the ratio of the two medians in the table part by more than its interval (a variant timed
beside its baseline can run otherwise than alone: docs/statistics.md). Every runtime reads the same
weights, so where one runtime's block takes several times another's, the bytes are not the difference: how
each computes the products is. What `graph` can win is what it removes — allocation and per-call
setup between the five kernels — which matters most when the kernels themselves are short; the last lines
above say whether that showed beyond the noise here.
"""),
    md("""
## Where the time goes: attention beside the MLP

Both parts were measured at this model's own shapes for one layer and one sequence (the MLP at its own widths,
attention with its own heads), so their times can be set side by side: a decode step runs both once per
layer, and the shares below are each part's share of the two. The rest of a layer (the q/k/v/o projections,
two norms, rope) and the step's embedding and output projection are not measured here. Attention grows with
the cache length, the MLP does not depend on it. Each runtime's attention is set beside the same runtime's
eager MLP block, by the medians of the two cells (different kernels: no paired verdict), and where the two
cells' quartile ranges overlap the order is not read.
"""),
    code("""
pairs = [("numpy-naive", "numpy-eager"), ("numba-flash", "numba-eager"), ("torch-sdpa", "torch-eager")]
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
    for r in d[d["variant"] == attention].sort_values("kv_len").itertuples():
        overlap = r.q1_s <= b.q3_s and b.q1_s <= r.q3_s
        share = r.median_s / (r.median_s + b.median_s)
        parts.append(f"L={r.kv_len:,}: {fmt_seconds(r.median_s)}, " + (
            "quartile ranges overlap the MLP's: not ordered" if overlap else f"{100 * share:.2g}% of the two"))
    longest = d[(d["variant"] == attention) & (d["kv_len"] == d["kv_len"].max())]["median_s"]
    step = (f"; a decode step runs both in each of the {layers} layers: about "
            f"{fmt_seconds(layers * (longest.iloc[0] + b.median_s))} for the two at L={d['kv_len'].max():,}"
            if len(longest) else "")
    print(f"{attention} beside {block} ({fmt_seconds(b.median_s)} a layer, any L): " + "; ".join(parts) + step)
"""),
    md("""
## 3. The execution cache

Every `graph` and `fused` variant goes through one shape-keyed cache: the first call for a shape records
(captures a graph, plans a launch list, compiles a fused kernel), later calls hit. Each row stores the
cache's statistics at the end of its cell (`exec_cache`); a fused recording that fails falls back to eager,
and the row says so.
"""),
    code("""
stats = pd.DataFrame([{"variant": r["variant"], "backend": r["backend"], **json.loads(r["exec_cache"])}
                      for _, r in every.iterrows() if isinstance(r.get("exec_cache"), str)])
# per variant: its own shape's replays and recording time; the worker process's totals (hits, misses,
# recordings over every variant that process ran: numba-graph and numba-fused share one) are left out
pd.DataFrame({"variant": stats["variant"], "backend": stats["backend"], "mode": stats["mode"],
              "replays of its shape": stats["shape_hits"], "recording took": stats["record_s"].map(fmt_seconds),
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
process, so the notebook's own cache only fills when a block runs here:
"""),
    code("""
workbench.clear_cache()
here = workbench.benchmark("mlp_block", variants=["numpy-graph"], backends=["numpy"], budget_s=0.05, rounds=1,
                           sizes=[{"tokens": 1, "hidden": hidden, "intermediate": intermediate}], progress=False,
                           isolation="in-process", name="tutorial 10: cache in this process")
s = workbench.execution_stats()
print({k: v for k, v in s.items() if k != "entries"})
pd.DataFrame(s["entries"])
"""),
]

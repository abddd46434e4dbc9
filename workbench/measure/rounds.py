"""Rounds: a cell measured once per round, its rounds merged into one row, and the noise of that row.

On a shared machine two streams of samples taken at different moments differ by far more than their
within-stream spread (load, clocks, other processes drift). A sweep with rounds therefore measures every
cell once per round, in an order shuffled per round, and keeps each round's median: the spread of those
medians is the cell's noise, and :mod:`workbench.judge.verdicts` judges differences by them.

- :func:`round_config`: one round's share of the timing budget (with a per-round minimum of samples).
- :func:`round_order`: the cells of one round, shuffled with a seeded RNG (reproducible from the spec).
- :func:`merge_rounds`: a stored row plus one more round -> the merged row.
- :func:`noise_fields`: ``noise`` / ``noisy`` / ``noise_note`` of a row.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.core.record import finite_or_none
from workbench.core.status import Status
from workbench.core.units import fmt_seconds
from workbench.judge import verdicts
from workbench.judge.dips import felt_dips, host_slow_rounds, rounds_at_speed, samples_at_speed
from workbench.judge.stats import bimodal_split, mode_median, relative_spread_of, round_weighted_quartiles, summarize
from workbench.measure.gpu_visit import merge_gpu_rounds
from workbench.measure.result import PAIR_VISIT
from workbench.measure.result_audit import implausible_reason
from workbench.measure.timer import TimingConfig
from workbench.roofs.ceilings import refresh_peak_note

#: A round takes at least this many samples (a median of fewer is one outlier away from wrong).
ROUND_MIN_SAMPLES = 3

#: Fields that scale with 1 / median (throughput and % of peak): rescaled when the headline median moves.
RATE_FIELDS = ("gflops", "gbps", "pct_peak_bw", "pct_peak_flops", "pct_published")
#: Ways a row can end early: such a cell is not measured again in later rounds.
FINAL_STATUSES = (Status.INCORRECT, Status.UNSUPPORTED, Status.OOM, Status.ERROR, Status.TIMEOUT, Status.CRASHED)
#: Which stop reason a merged row reports (the most telling one across its rounds).
_STOP_RANK = {"deadline": 0, "max_samples": 1, "budget": 2, "spread": 3, "precision": 4}

T = TypeVar("T")


def round_config(config: TimingConfig, rounds: int, later: bool = False) -> TimingConfig:
    """One round's timing config: the budget divided by ``rounds``; samples shared out likewise, but at
    least :data:`ROUND_MIN_SAMPLES` (or ``min_samples`` when that is smaller) per round.

    ``later``: for a cell's rounds after its first, which also warm up for ``warmup_s / rounds`` only
    (still at least one call): the first round's warm-up absorbed compilation and lazy set-up, a later
    one only has to bring caches back after the other cells.
    """
    if rounds <= 1:
        return config
    floor = min(ROUND_MIN_SAMPLES, config.min_samples)
    min_samples = max(floor, math.ceil(config.min_samples / rounds))
    max_samples = max(min_samples, math.ceil(config.max_samples / rounds))
    return dataclasses.replace(config, budget_s=config.budget_s / rounds, extend_s=config.extend_s / rounds,
                               min_samples=min_samples,
                               max_samples=max_samples,
                               warmup_s=config.warmup_s / rounds if later else config.warmup_s)


def round_seed(seed: int, round_index: int) -> str:
    """The RNG seed of one round's order (``random.Random`` hashes a str seed the same way everywhere)."""
    return f"workbench-rounds:{seed}:{round_index}"


def round_order(items: Sequence[T], group_of: Any, seed: int, round_index: int,
                anchor: Any = None) -> list[T]:
    """``items`` in round ``round_index``'s order: the groups (cells sharing inputs: one kernel, size and
    dtype) in a shuffled order, and the cells of each group shuffled within it; ``anchor(item)`` True marks
    a group's references (the baselines its other cells are judged against), which then go to the middle
    of their group (several: spread evenly), the others shuffled around them.

    Contenders (the variants and backends of one group) are thus measured back to back, so the drift
    between them is small, and in a different order every round, so no position in the group (first
    after input generation, say) favours one of them. A full shuffle would spread a pair across the whole
    round and regenerate inputs at every cell. The drift grows with the time between two visits (measured
    under load: paired round differences deviated 0.8% (median) for neighbours, 2.7% for cells 5-8 visits
    apart), and every verdict is a contender against its reference: a reference in the middle is on average
    nearest its contenders.
    """
    rng = random.Random(round_seed(seed, round_index))
    groups: dict[Any, list[T]] = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    keys = list(groups)
    rng.shuffle(keys)
    out: list[T] = []
    for k in keys:
        members = list(groups[k])
        rng.shuffle(members)
        out += centred(members, anchor) if anchor is not None else members
    return out


def centred(members: list[T], anchor: Any) -> list[T]:
    """``members`` with those ``anchor`` marks placed evenly through the others (one: in the middle), the
    others keeping their order."""
    refs = [m for m in members if anchor(m)]
    rest = [m for m in members if not anchor(m)]
    if not refs or not rest:
        return members
    out = list(rest)
    for i, ref in enumerate(refs):  # positions (i + 1/2) / k of the way through the others
        out.insert(round((i + 0.5) * len(rest) / len(refs)) + i, ref)
    return out


def rounds_done(row: Mapping[str, Any] | None) -> int:
    """Rounds a stored row has: 0 for none; a row from before rounds existed counts as 1."""
    if not row:
        return 0
    if row.get("rounds"):
        return int(row["rounds"])
    return 1 if row.get("status") else 0


#: A cell whose median round is this much slower than its fastest round is measured again (extra rounds, paid
#: from the reserve): a disturbance only adds time, so such a median may rest on disturbed rounds. A numpy
#: kernel read rounds of 47.2, 64.8 and 66.2 us (the host ran it 1.4x slow for seconds at a time, no process of
#: ours beside it), and its headline of 64.8 us read as a 39% step in its history.
REMEASURE_ABOVE_FASTEST = 0.10


def median_above_fastest(row: Mapping[str, Any] | None) -> bool:
    """Whether an ok row's median round is more than :data:`REMEASURE_ABOVE_FASTEST` slower than its fastest, or
    a round the slow host stretched left it fewer rounds at speed than a verdict judges on
    (:data:`~workbench.judge.verdicts.MIN_ROUNDS`): its headline may rest on disturbed rounds, and more rounds
    would tell."""
    if not row or row.get("status") != "ok":
        return False
    medians = [m for m in _loads(row.get("round_medians_s")) if m and m > 0]
    at_speed = rounds_at_speed(medians, _loads(row.get("round_host_slowdowns")))
    if len(medians) >= 2 and len(at_speed) < min(len(medians), verdicts.MIN_ROUNDS):
        return True  # the host slowed a round it felt: fewer rounds than a verdict needs are left to judge it by
    return len(medians) >= 2 and statistics.median(medians) > (1.0 + REMEASURE_ABOVE_FASTEST) * min(medians)


def is_final(row: Mapping[str, Any] | None) -> bool:
    """The cell ended (failed, or could not run): later rounds leave it alone."""
    return bool(row) and row.get("status") in FINAL_STATUSES


def _loads(text: Any) -> list[float]:
    if not text:
        return []
    try:
        v = json.loads(text) if isinstance(text, str) else list(text)
    except (TypeError, ValueError):
        return []
    return [float(x) for x in v if isinstance(x, (int, float))]


def _worst(a: Any, b: Any, pick: Any) -> Any:
    vals = [x for x in (a, b) if x is not None]
    return pick(vals) if vals else None


def _sum(a: Any, b: Any) -> Any:
    vals = [x for x in (a, b) if x is not None]
    return sum(vals) if vals else None


def _throttle(a: str | None, b: str | None) -> str | None:
    if a is None and b is None:
        return None
    words = [w for s in (a, b) if s for w in s.split(", ")]
    return ", ".join(dict.fromkeys(words))


def _joined(a: str | None, b: str | None) -> str | None:
    """Thread settings of two rounds: one text when they agree, both joined by " | " when not."""
    parts = [p for s in (a, b) if s for p in s.split(" | ")]
    return " | ".join(dict.fromkeys(parts)) or None


def merge_conditions(prev: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The worst conditions of two rounds: max load, CPU share and temperature, summed CPU seconds,
    the lowest clocks, every throttle reason seen, every thread setting seen."""
    return {"load_avg_1m": _worst(prev.get("load_avg_1m"), new.get("load_avg_1m"), max),
            "other_cpu_share": _worst(prev.get("other_cpu_share"), new.get("other_cpu_share"), max),
            "other_cpu_s": _sum(prev.get("other_cpu_s"), new.get("other_cpu_s")),
            "steal_s": _sum(prev.get("steal_s"), new.get("steal_s")),
            "cpu_freq_mhz": _worst(prev.get("cpu_freq_mhz"), new.get("cpu_freq_mhz"), min),
            "gpu_clock_mhz": _worst(prev.get("gpu_clock_mhz"), new.get("gpu_clock_mhz"), min),
            "gpu_temp_c": _worst(prev.get("gpu_temp_c"), new.get("gpu_temp_c"), max),
            "gpu_throttle": _throttle(prev.get("gpu_throttle"), new.get("gpu_throttle")),
            "gpu_mem_clock_mhz": _worst(prev.get("gpu_mem_clock_mhz"), new.get("gpu_mem_clock_mhz"), min),
            "gpu_power_w": _worst(prev.get("gpu_power_w"), new.get("gpu_power_w"), max),
            "threads": _joined(prev.get("threads"), new.get("threads"))}


def noise_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """``noise``, ``noisy`` and ``noise_note`` from a row's round medians (≥ 2 rounds) or, with one
    round, the spread of its samples; plus the busy-machine flag from ``other_cpu_share``."""
    every = _loads(row.get("round_medians_s"))
    samples = _loads(row.get("samples_s"))
    host_slow = host_slow_rounds(every, _loads(row.get("round_host_slowdowns")))
    medians = [m for i, m in enumerate(every) if i not in host_slow]  # the rounds the headline is taken of
    if len(medians) >= 2:
        noise = verdicts.rel_spread(medians)
        where = f"across {len(medians)} rounds"
    else:
        noise = verdicts.rel_spread(samples)
        where = "within one stream of samples"
    noise = finite_or_none(noise)
    if noise is None:
        return {"noise": None, "noisy": None, "noise_note": None}
    reasons = []
    split = bimodal_split(medians) if len(medians) >= 2 else None
    if split is not None:
        fast, slow = split
        reasons.append(f"bimodal rounds: {len(fast)} near {fmt_seconds(float(np.median(fast)))}, {len(slow)} near "
                       f"{fmt_seconds(float(np.median(slow)))} (the median is the "
                       f"{'faster' if len(fast) >= len(slow) else 'slower'} mode's)")
    elif verdicts.is_noisy(noise):
        reasons.append(f"spread {100 * noise:.0f}% {where}")
    if dips := _felt_dips(every, _loads(row.get("round_bandwidth_gbs"))):
        reasons.append("the host's memory bandwidth was down in " + ", ".join(dips))
    share = row.get("other_cpu_share")
    if share is not None and share > BUSY_CPU_SHARE:
        reasons.append(f"other processes used {100 * share:.0f}% of the CPU")
    aside = [f"round {i + 1} set aside: taken while the host ran slow (its probe {s:.2f}x its best; the cell "
             f"{felt:.2f}x its rounds at speed)" for i, (s, felt) in host_slow.items()]
    return {"noise": noise, "noisy": bool(reasons), "noise_note": "; ".join(reasons + aside)}


def _felt_dips(medians: list[float], bandwidths: list[float]) -> list[str]:
    """:func:`felt_dips` in words, for a row's noise note."""
    best = max((float(g) for g in bandwidths), default=0.0)
    return [f"round {i + 1} ({frac * best:.1f} of {best:.1f} GB/s; the cell {slow:.2f}x its other rounds' time)"
            for i, (frac, slow) in felt_dips(medians, bandwidths).items()]


def label_round(prev: Mapping[str, Any] | None, row: dict[str, Any], round_id: str) -> dict[str, Any]:
    """``row`` (``prev`` merged with one more round) with ``round_id`` added to its round ids when that round
    added a round median, and only when every earlier median has its id (a row resumed from a store
    without ids stays without: it is then paired by round counts)."""
    before, after = len(_loads(prev.get("round_medians_s"))) if prev else 0, len(_loads(row.get("round_medians_s")))
    ids = verdicts.round_ids(prev.get(verdicts.ROUND_IDS)) if prev else []
    if ids is not None and len(ids) == before:
        row[verdicts.ROUND_IDS] = ids + [round_id] if after == before + 1 else ids
    return row


def merge_twin(row: Mapping[str, Any], twin: Mapping[str, Any], round_id: str) -> dict[str, Any]:
    """A reference row with its A/A twin's visit of round ``round_id`` added (the twin's round median and
    its id, and its effect against the reference timed beside it in that visit); a twin visit that did not
    end ``ok`` adds nothing (the reference's own visit reports)."""
    out = dict(row)
    if twin.get("status") == Status.OK and twin.get("median_s"):
        medians = _loads(row.get(verdicts.TWIN_MEDIANS)) + [float(twin["median_s"])]
        out[verdicts.TWIN_MEDIANS] = json.dumps(medians)
        out[verdicts.TWIN_IDS] = (verdicts.round_ids(row.get(verdicts.TWIN_IDS)) or []) + [round_id]
        visit = _pair_visit(twin)
        if visit is not None and visit[0] == row.get("cell_key"):
            _append_effect(out, verdicts.TWIN_PAIR_D, verdicts.TWIN_PAIR_IDS, visit[1], round_id)
    out.pop(PAIR_VISIT, None)
    return out


def _pair_visit(row: Mapping[str, Any]) -> tuple[str, float] | None:
    """(the baseline's cell key, the visit's effect) of one visit timed beside its baseline, else None."""
    text = row.get(PAIR_VISIT)
    if not isinstance(text, str):
        return None
    try:
        visit = json.loads(text)
        return str(visit["with"]), float(visit["d"])
    except (ValueError, KeyError, TypeError):
        return None


def _append_effect(out: dict[str, Any], d_key: str, ids_key: str, d: float, round_id: str) -> None:
    out[d_key] = json.dumps(list(verdicts.effects(out.get(d_key))) + [d])
    out[ids_key] = (verdicts.round_ids(out.get(ids_key)) or []) + [round_id]


def merge_pair(prev: Mapping[str, Any] | None, row: dict[str, Any], new: Mapping[str, Any],
               round_id: str) -> dict[str, Any]:
    """``row`` (``prev`` merged with the visit ``new``) with that visit's effect against the baseline timed
    beside it appended to the cell's per-round effects (:data:`workbench.judge.verdicts.PAIR_D`, with the round's
    id). A visit against another baseline than the earlier ones starts the effects again (the row is judged
    against one baseline); a visit that did not end ok, or was not paired, adds none."""
    visit = _pair_visit(new)
    row.pop(PAIR_VISIT, None)
    if visit is None or new.get("status") not in _MEASURED:
        return row
    if prev is None or prev.get(verdicts.PAIR_WITH) != visit[0]:
        for k in (verdicts.PAIR_D, verdicts.PAIR_IDS):
            row.pop(k, None)
    row[verdicts.PAIR_WITH] = visit[0]
    _append_effect(row, verdicts.PAIR_D, verdicts.PAIR_IDS, visit[1], round_id)
    return row


def finish_single_round(row: dict[str, Any]) -> dict[str, Any]:
    """Round fields of a row measured once: ``rounds`` = 1, its median as the one round median, noise."""
    if row.get("median_s") is not None and row.get("samples_s"):
        row["rounds"] = 1
        row["round_medians_s"] = json.dumps([row["median_s"]])
        row["round_sizes"] = json.dumps([len(_loads(row["samples_s"]))])
        row["round_probes_s"] = json.dumps([row["speed_probe_s"]]) if row.get("speed_probe_s") else None
        bandwidth = row.get("bandwidth_probe_gbs")
        row["round_bandwidth_gbs"] = json.dumps([bandwidth]) if bandwidth else None
        slowdown = row.get("host_slowdown")
        row["round_host_slowdowns"] = json.dumps([slowdown]) if slowdown else None
        host_probe = row.get("host_probe_s")
        row["round_host_probes_s"] = json.dumps([host_probe]) if host_probe else None
    row.update(noise_fields(row))
    return row


#: Round outcomes whose samples are pooled: verified and timed (``implausible`` is timed too; the judgment
#: is on the speed, so its round counts like any other and the cell keeps the mark).
_MEASURED = (Status.OK, Status.IMPLAUSIBLE)


def _verdict_of_rounds(prev: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Status and message after pooling two measured outcomes: a round timed beyond the device's top roof
    marks the whole cell ``implausible`` (its message kept), whatever the other rounds read."""
    for row in (new, prev):
        if row.get("status") == Status.IMPLAUSIBLE:
            return {"status": Status.IMPLAUSIBLE, "message": row.get("message")}
    return {"status": Status.OK, "message": new.get("message") or prev.get("message")}


#: The ceilings a row names (kept with the percentages taken of them).
CEILING_FIELDS = ("ceiling_gbps", "ceiling_gflops", "ceiling_source")


def _rejudged(out: Mapping[str, Any], prev: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """An ``implausible`` mark judged again on the pooled row: its median rate (the one its table prints) against
    the FLOP roof it names. 04 set numpy's GEMM aside as "184 GFLOP/s is 1.8x the roof (105 GFLOP/s)", a round's
    median against another roof, beside its row's 174 GFLOP/s of a 126 GFLOP/s ceiling. A mark from the L1
    bandwidth roof stands (the row does not name that roof)."""
    if out.get("status") != Status.IMPLAUSIBLE or " GB/s is " in str(out.get("message") or ""):
        return {}
    why = implausible_reason(out)
    if why:
        return {"message": why}
    kept = next((r.get("message") for r in (new, prev) if r.get("status") != Status.IMPLAUSIBLE), None)
    return {"status": Status.OK, "message": kept}


def _per_round(prev: Mapping[str, Any], new: Mapping[str, Any], one: str, each: str, rounds: int) -> list[float]:
    """A probe's figure for every round so far (``each``: the list kept on ``prev``; ``one``: a round's own),
    or none at all where a round lacks one: a list never misaligned with the round medians."""
    values = (_loads(prev.get(each)) or [prev.get(one)]) + [new.get(one)]
    return [float(v) for v in values] if all(values) and len(values) == rounds else []


def _rates_at(median: float, *rows: Mapping[str, Any]) -> dict[str, Any]:
    """Throughput and % of peak at the headline ``median`` (they scale with 1 / median), from the first of
    ``rows`` that has each, with the ceilings its percentages were taken of."""
    out: dict[str, Any] = {}
    for k in RATE_FIELDS:
        for src in rows:
            if src.get(k) is not None and src.get("median_s") and median > 0:
                out[k] = src[k] * src["median_s"] / median
                if k.startswith("pct_peak"):  # the ceilings named are those the percentages were taken of
                    out.update({c: src.get(c) for c in CEILING_FIELDS if src.get(c) is not None})
                break
    return out


def _at_speed(samples: list[float], sizes: list[int], medians: list[float],
              slowdowns: list[float]) -> tuple[list[float], list[int]]:
    """The samples and round sizes of the rounds the headline is taken of (without those set aside as taken while
    the host ran slow): the quartiles beside a headline are of the same rounds (a timeit printed "33.7 µs median
    (quartiles 35.2 µs to 44.2 µs)"). :func:`~workbench.judge.dips.samples_at_speed`, the figures' rule too."""
    return samples_at_speed(samples, sizes, medians, slowdowns)


def _host_rounds(prev: Mapping[str, Any], new: Mapping[str, Any], slowdowns: list[float],
                 rounds: int) -> dict[str, Any]:
    """The host's readings of a cell after one more round: each round's slowdown, the worst, the waits summed;
    each round's host probe (seconds) and their median."""
    probes = _per_round(prev, new, "host_probe_s", "round_host_probes_s", rounds)
    return {"round_host_slowdowns": json.dumps(slowdowns) if slowdowns else None,
            "host_slowdown": max(slowdowns) if slowdowns else None,
            "round_host_probes_s": json.dumps(probes) if probes else None,
            "host_probe_s": float(np.median(probes)) if probes else None,
            "host_settle_s": _sum(prev.get("host_settle_s"), new.get("host_settle_s")),
            "host_retries": _sum(prev.get("host_retries"), new.get("host_retries"))}


def merge_rounds(prev: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """The row of a cell after one more round: ``prev`` (the rounds so far, or None) and ``new`` (this
    round's row from :func:`~workbench.measure.cell.run_cell`).

    Samples are pooled; ``median_s`` is the median of the round medians (the headline figure, robust to
    one drifted round); mean, min and quartiles stay those of all samples. A round that failed ends the
    cell with its status and message (earlier rounds' samples are kept); an ``implausible`` round is pooled
    like an ok one and marks the cell ``implausible``.
    """
    if not prev or not _loads(prev.get("samples_s")):
        return finish_single_round(dict(new))
    out = dict(prev)
    out.update({k: new[k] for k in ("finished_at", "timer_kind", "timer_overhead_s", "runtime", "device",
                                    "env_id", "run_id", "exec_cache", "tuned_config", "llm_shape")
                if new.get(k) is not None})
    out["wall_s"] = _sum(prev.get("wall_s"), new.get("wall_s"))
    out["warmup_calls"] = _sum(prev.get("warmup_calls"), new.get("warmup_calls"))
    out["max_error"] = _worst(prev.get("max_error"), new.get("max_error"), max)
    out["median_precision"] = _worst(prev.get("median_precision"), new.get("median_precision"), max)
    out.update(merge_conditions(prev, new))
    out.update(merge_gpu_rounds(prev, new))
    if new.get("status") not in _MEASURED or not _loads(new.get("samples_s")):
        out.update(status=new.get("status"), message=new.get("message"), traceback=new.get("traceback"),
                   tolerance=new.get("tolerance") or prev.get("tolerance"))
        out.update(noise_fields(out))
        return out

    samples = _loads(prev.get("samples_s")) + _loads(new.get("samples_s"))
    host = _loads(prev.get("host_samples_s")) + _loads(new.get("host_samples_s"))
    medians = (_loads(prev.get("round_medians_s")) or [prev.get("median_s")]) + [new.get("median_s")]
    medians = [float(m) for m in medians if m is not None]
    probes = _per_round(prev, new, "speed_probe_s", "round_probes_s", len(medians))
    bandwidths = _per_round(prev, new, "bandwidth_probe_gbs", "round_bandwidth_gbs", len(medians))
    slowdowns = _per_round(prev, new, "host_slowdown", "round_host_slowdowns", len(medians))
    st = summarize(samples)
    # rounds the host slowed (and the cell felt) set aside; with two modes: the majority mode's, never between
    median = mode_median(rounds_at_speed(medians, slowdowns))
    sizes = [int(n) for n in _loads(prev.get("round_sizes"))] + [len(_loads(new.get("samples_s")))]
    sizes = sizes if len(sizes) == len(medians) and sum(sizes) == len(samples) else []
    q1, q3 = round_weighted_quartiles(*_at_speed(samples, sizes, medians, slowdowns)) or (st.q1, st.q3)
    out.update(samples_s=json.dumps(samples), host_samples_s=json.dumps(host), n_samples=st.n,
               median_s=median, mean_s=st.mean, min_s=st.min, q1_s=q1, q3_s=q3, iqr_s=q3 - q1,
               rel_spread=finite_or_none(relative_spread_of(q3 - q1, median)),
               round_sizes=json.dumps(sizes) if sizes else None,
               host_median_s=summarize(host).median if host else None,
               rounds=len(medians), round_medians_s=json.dumps(medians),
               round_probes_s=json.dumps(probes) if probes else None,
               speed_probe_s=float(np.median(probes)) if probes else None,
               round_bandwidth_gbs=json.dumps(bandwidths) if bandwidths else None,
               bandwidth_probe_gbs=float(np.median(bandwidths)) if bandwidths else None,
               **_host_rounds(prev, new, slowdowns, len(medians)),
               calls_per_sample=max(prev.get("calls_per_sample") or 1, new.get("calls_per_sample") or 1),
               stopped_by=min((s for s in (prev.get("stopped_by"), new.get("stopped_by")) if s),
                              key=lambda s: _STOP_RANK.get(s, 9), default=None),
               **_verdict_of_rounds(prev, new))
    out.update(_rates_at(median, new, prev))
    out.update(_rejudged(out, prev, new))
    refresh_peak_note(out)  # the note of a % above 100 follows the rescaled percentages
    out.update(noise_fields(out))
    return out

"""Claims read from a run's rows (not its verdicts): the host's memory bandwidth each round saw, a kernel's share
of it, and the modes a cell's rounds fell in. Split from :mod:`workbench.report.claims`, which re-exports them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd


def _num(v: Mapping[str, Any], key: str) -> float:
    value = v.get(key)
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


#: The phrase a row's noise note carries for a round timed while the host's memory bandwidth was down
#: (:func:`workbench.measure.rounds` notes, from the rows' ``round_bandwidth_gbs``).
BANDWIDTH_DOWN_NOTE = "memory bandwidth was down"


def host_bandwidth(rows: pd.DataFrame) -> tuple[float, int] | None:
    """(GB/s, probes): the best of the host-bandwidth probes the rows' rounds took (``round_bandwidth_gbs``, a copy
    through twice the last-level cache before each round past the cache), and how many distinct ones; None where no
    row has one. The best, not a median: a probe only reads low when another tenant shares the memory bus, so
    the best is the host's rate undisturbed, the reference a kernel past the cache is set against (a kernel
    timed in a disturbed round set against its own round's saxpy would read a share of a rate that was down)."""
    values: list[float] = []
    lists = rows.get("round_bandwidth_gbs", pd.Series([None] * len(rows), index=rows.index, dtype=object))
    ones = pd.to_numeric(rows.get("bandwidth_probe_gbs", pd.Series(dtype=float)), errors="coerce")
    for i, text in lists.items():
        # a row's bandwidth_probe_gbs is its rounds' median, not another probe: read only where it has no rounds'
        if text is None or (isinstance(text, float) and math.isnan(text)):
            values += [float(ones[i])] if i in ones.index and pd.notna(ones[i]) else []
            continue
        try:
            values += [float(g) for g in (json_list(text))]
        except (TypeError, ValueError):
            continue
    values = [g for g in values if math.isfinite(g) and g > 0]
    # one probe per round, shared by every cell past the cache in it (sweep.driver): counted once, not per cell
    # (10 printed "best of 21 probes" for seven cells' copies of three)
    return (max(values), len(set(values))) if values else None


def json_list(text: Any) -> list[Any]:
    """A row's JSON list column as a list ([] for None; a list passes through)."""
    import json

    if isinstance(text, list):
        return text
    found = json.loads(text) if isinstance(text, str) and text else []
    return found if isinstance(found, list) else [found]


def bandwidth_down_text(rows: pd.DataFrame, label: str = "size_label") -> str:
    """A sentence for a summary: which cells had rounds timed while the host's memory bandwidth was down (their
    noise notes say so, with the figures), and that their medians and quartiles carry it; "" where none did."""
    if "noise_note" not in rows:
        return ""
    hit = rows[rows["noise_note"].fillna("").astype(str).str.contains(BANDWIDTH_DOWN_NOTE)]
    if hit.empty:
        return ""
    names = sorted({f"{r.get('variant', '?')} on {r.get('backend', '?')} at {r.get(label, '?')}"
                    for r in hit.to_dict("records")})
    # every name up to six (a reader met "... and 1 more" and could not tell which); past that, the count
    shown = (", ".join(names[:-1]) + f" and {names[-1]}" if 1 < len(names) <= 6 else names[0] if len(names) == 1
             else ", ".join(names[:5]) + f" and {len(names) - 5} more")
    return (f"the host's memory bandwidth was down in some rounds of {len(names)} of {len(rows)} cells, and those "
            f"cells ran slower in them ({shown}; their notes give each such round's probe and how much slower the "
            "cell ran): their quartiles carry those rounds, and so does a median where they are not outvoted")


def round_rates(row: Mapping[str, Any]) -> list[tuple[float, float]]:
    """(GB/s, the probe's GB/s it is set against) of each round of a cell whose rounds took a bandwidth probe: the
    compulsory bytes over the round's median, and that round's own probe where the cell felt its dip, else the best
    probe of its rounds (empty where the rounds carry no probes). Printed beside a share from
    :func:`own_rounds_share`, they let a reader redo it (10 printed shares no printed figure reproduced)."""
    from workbench.judge.dips import felt_dips

    medians = [float(m) for m in json_list(row.get("round_medians_s"))]
    probes = [float(g) for g in json_list(row.get("round_bandwidth_gbs"))]
    nbytes = _num(row, "bytes")
    if not medians or len(medians) != len(probes) or not math.isfinite(nbytes):
        return []
    # a round is set against its own probe only where the cell felt its dip (judge/dips.felt_dips); against
    # the best probe of its rounds otherwise: a dip the cell did not feel is the probe's, and dividing by it put
    # 05's numba-fused at 110-114% in the dipped rounds and 88-100% in the others
    felt, best = felt_dips(medians, probes), max(probes)
    return [(nbytes / m / 1e9, g if i in felt else best)
            for i, (m, g) in enumerate(zip(medians, probes, strict=True)) if m > 0 and g > 0]


def own_rounds_share(row: Mapping[str, Any]) -> float | None:
    """A cell's GB/s as a share of the host's bandwidth in its own rounds: per round, the compulsory bytes over the
    round's median (``round_medians_s``) against that round's probe (``round_bandwidth_gbs``), and the median of
    those shares. A kernel timed while another tenant shared the memory bus is set against the rate that bus gave
    then, not against the best probe of the run (05 read 'no variant streams near the memory's rate' from medians
    of bandwidth-down rounds divided by an undisturbed probe). None where the rounds carry no probes."""
    shares = sorted(gbps / probe for gbps, probe in round_rates(row))
    if not shares:
        return None
    mid = len(shares) // 2
    return shares[mid] if len(shares) % 2 else (shares[mid - 1] + shares[mid]) / 2


def bimodal_fields(a: Mapping[str, Any], b: Mapping[str, Any], name_a: str, name_b: str) -> dict[str, Any]:
    """``bimodal_note`` and ``mode_ratios`` for a pair (``a`` the baseline row, ``b`` the other) whose rounds fell
    in two modes on either side (:func:`workbench.judge.stats.bimodal_split` of their round medians): the note
    names each such side's modes ("float16's rounds fell in two modes: 2 near 3.45 ms, 1 near 7.36 ms"), and the
    ratios set every mode against the other side's median (a / b, as a speed-up), so a settled direction
    (:func:`settled_direction`) covers each mode the rounds drew, not only the one the headline median sits in.
    Empty when neither side is bimodal."""
    from workbench.core.units import fmt_seconds
    from workbench.judge.stats import bimodal_split

    notes, ratios = [], []
    for name, row, other, mine_first in ((name_a, a, b, True), (name_b, b, a, False)):
        split = bimodal_split([float(x) for x in json_list(row.get("round_medians_s"))])
        if split is None:
            continue
        modes = [(len(m), float(pd.Series(m).median())) for m in split]
        notes.append(f"{name}'s rounds fell in two modes: "
                     + ", ".join(f"{n} near {fmt_seconds(t)}" for n, t in modes))
        theirs = _num(other, "median_s")
        if math.isfinite(theirs) and theirs > 0:
            ratios += [t / theirs if mine_first else theirs / t for _, t in modes]
    return {"bimodal_note": "; ".join(notes), "mode_ratios": ratios} if notes else {}


def disturbed_bimodal_direction(v: Mapping[str, Any], margin: float) -> tuple[str, float, float] | None:
    """("faster" | "slower", lowest, highest estimate) for a disturbed pair with a side whose rounds fell in two
    modes (``bimodal_note``), where the direction holds whichever mode a round drew: the paired interval excludes
    no change on one side, and every estimate (the paired speed-up, the medians' ratio, each mode against the other
    cell, ``mode_ratios``) lies on that side by more than the noise (the larger of ``margin``, the pair's floor and
    its interval's half-width). 06 read "could not tell float16 from float32: disturbed" beside float32 modes of
    1.03 ms and 1.92 ms against float16's 28.8 ms, both 15-28x apart. None otherwise."""
    if not v.get("bimodal_note"):
        return None
    s, lo, hi, floor = (_num(v, k) for k in ("speedup", "ci_low", "ci_high", "floor"))
    a, b = _num(v, "median_a"), _num(v, "median_b")
    estimates = [s, a / b if b > 0 else float("nan")] + [float(x) for x in (v.get("mode_ratios") or [])]
    if not all(math.isfinite(x) and x > 0 for x in [*estimates, lo, hi, floor]) or lo > hi:
        return None
    noise = max(margin, floor, math.sqrt(hi / lo) - 1)
    if lo > 1 and min(estimates) > 1 + noise:
        return "faster", min(estimates), max(estimates)
    if hi < 1 and max(estimates) < 1 / (1 + noise):
        return "slower", min(estimates), max(estimates)
    return None


def bimodal_direction_text(v: Mapping[str, Any], way: str, base: str, other: str) -> str:
    """Who was faster in both modes of a bimodal side's rounds (:func:`disturbed_bimodal_direction`), with the
    modes and the other side's median they were set against, and no size: "float32 ran faster in both modes, by
    how much is unknown: float32's rounds fell in two modes: 2 near 1.03 ms, 1 near 1.92 ms, against float16's
    median 28.8 ms, every mode on the same side past the noise"."""
    from workbench.core.units import fmt_seconds

    winner = other if way == "faster" else base
    note = str(v["bimodal_note"])
    # the side each mode was set against: its median (a bimodal side's own median would headline one mode)
    medians = "; ".join(f"{name}'s median {fmt_seconds(_num(v, key))}" for name, key in
                        ((base, "median_a"), (other, "median_b"))
                        if math.isfinite(_num(v, key)) and f"{name}'s rounds fell" not in note)
    return (f"{winner} ran faster in both modes, by how much is unknown: {note}"
            + (f", against {medians}" if medians else "") + ", every mode on the same side past the noise")


def median_rounds(row: Mapping[str, Any]) -> list[tuple[float, float]]:
    """The round(s) (GB/s, probe GB/s) whose share is :func:`own_rounds_share`: one round for an odd count, the two
    middle ones (whose shares it averages) for an even one, [] where the rounds carry no probes. A share is printed
    beside the figure it comes from: 10 printed "4.2 GB/s (median), 16% of its own rounds' probes" where the 4.2 was
    the median of all samples and the 16% the round at 3.8/23.1."""
    rates = sorted(round_rates(row), key=lambda gp: gp[0] / gp[1])
    if not rates:
        return []
    mid = len(rates) // 2
    return [rates[mid]] if len(rates) % 2 else rates[mid - 1:mid + 1]


def two_figures(text: str, value: float) -> str:
    """``text`` (a ratio printed as "8×" or "7.53×") where it carries at least two significant figures, else
    ``value`` to two ("7.5×"): a ratio printed beside three-figure medians (10: "23.8 ms / 3.16 ms, 8x") must not
    read coarser than the figures it divides."""
    return figures_at_least(text, value, 2)


def printed_ratio(a_s: float, b_s: float) -> float:
    """``a_s / b_s`` as the two times print (:func:`~workbench.core.units.fmt_seconds`, three figures): the ratio a
    reader dividing the table gets. 10 printed "123 µs / 119 µs, 1.04×" (123.4 / 118.6 unrounded), which the
    printed figures give as 1.03."""
    from workbench.core.units import TIME_UNITS, fmt_seconds

    scales = dict(TIME_UNITS)

    def back(x: float) -> float:
        number, unit = fmt_seconds(x).split(" ")
        return float(number) * scales[unit]

    return back(a_s) / back(b_s)


def figures_at_least(text: str, value: float, n: int) -> str:
    """``text`` (a ratio printed as "8×" or "7.53×") where it carries at least ``n`` significant figures, else
    ``value`` to ``n``. Three for the ratio of two medians a table prints to three: 10 printed "1.1×" and "8.7×"
    beside medians of 42.9 / 37.2 µs (1.15) and 23.8 / 2.75 ms (8.65), a rounding a reader's division of the table
    contradicts."""
    digits = text.rstrip("×x").replace(".", "").replace(",", "").lstrip("0")
    if len(digits) >= n or not math.isfinite(value):
        return text
    # "#" keeps trailing zeros: 69.1 / 63.1 printed "1.1×" at "three figures" (".3g" drops the zero of 1.10)
    shown = f"{value:#.{n}g}"
    return f"{float(shown):,.0f}×" if "e" in shown else f"{shown.rstrip('.')}×"


def quartiles_wide(row: Mapping[str, Any]) -> bool:
    """Whether a cell's quartiles span past :data:`~workbench.judge.verdicts.DISTURBED_FLOOR` (±50%, the summary's
    "disturbed") of its median, by the
    table's IQR or by its quartiles (``q1_s``/``q3_s``, what an overlap test reads): its median then informs no
    share or total built on it (10 printed "quartile ranges overlap the MLP's: not ordered" beside medians 3.9x
    apart, then "93% of the two" and a step total from those same medians)."""
    from workbench.judge.disturbed import cell_disturbed

    return cell_disturbed(*(_num(row, k) for k in ("median_s", "iqr_s", "q1_s", "q3_s")))

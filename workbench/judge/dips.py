"""The host's weather in a cell's rounds: which rounds' bandwidth probes read low or were taken while the host ran
slow (:mod:`workbench.measure.host_settle`), and which of those the cell itself felt. Plain statistics on a row's
per-round figures, shared by the harness (a row's noise note,
:mod:`workbench.measure.rounds`) and the sentences that set a cell against the bandwidth it had
(:mod:`workbench.report.claims_rows`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: A round whose bandwidth probe read below this share of the best round's is marked with the figure.
BANDWIDTH_DOWN = 0.85


def bandwidth_dips(round_gbs: Sequence[float], down: float = BANDWIDTH_DOWN) -> list[tuple[int, float]]:
    """(round index, share of the best round's bandwidth) of each round whose bandwidth probe read below
    ``down`` of the best: rounds timed while the host's memory bus was shared more than in the others."""
    top = max(round_gbs, default=0.0)
    if top <= 0:
        return []
    return [(i, g / top) for i, g in enumerate(round_gbs) if g < down * top]


#: A round of a cell counts as slowed by a dip of the host's bandwidth when it ran this much slower than the cell's
#: rounds without a dip (a dip the cell did not feel is the probe's, not the cell's: tutorial 05's readers found
#: "bandwidth down" rows whose dipped round was their fastest).
DIP_FELT = 1.05


def felt_dips(medians: Sequence[float], bandwidths: Sequence[float]) -> dict[int, tuple[float, float]]:
    """Round index -> (the probe's share of the best round's bandwidth, the cell's time there over the median of
    its undipped rounds) for each round whose bandwidth probe read low
    (:func:`bandwidth_dips`) and in which the cell itself ran :data:`DIP_FELT`
    slower: the rounds a reader may set against their own probe (a dip the cell did not feel is the probe's)."""
    if len(medians) < 2 or len(bandwidths) != len(medians):
        return {}
    dips = bandwidth_dips([float(g) for g in bandwidths])
    steady = [m for i, m in enumerate(medians) if i not in {d for d, _ in dips}]
    if not dips or not steady:
        return {}
    base = float(np.median(steady))
    return {i: (frac, medians[i] / base) for i, frac in dips if medians[i] > DIP_FELT * base}


#: A round whose host probe read this much over its process's best was taken while the host ran slow
#: (:mod:`workbench.measure.host_settle`: the slow host read its probe 1.25-1.45x, a host at speed within 4%).
HOST_SLOW = 1.08


def host_slow_rounds(medians: Sequence[float], slowdowns: Sequence[float],
                     slow: float = HOST_SLOW) -> dict[int, tuple[float, float]]:
    """Round index -> (the host's slowdown around it, the cell's time there over the median of its rounds at speed)
    for each round taken while the host ran ``slow`` and in which the cell itself ran :data:`DIP_FELT` slower. Empty
    where no round was at speed: there is nothing to set the slow ones against."""
    if len(medians) < 2 or len(slowdowns) != len(medians) or not any(s > slow for s in slowdowns):
        return {}  # (no round slow: nothing set aside, without the median; most rows of a million-row report)
    at_speed = [m for m, s in zip(medians, slowdowns, strict=True) if s <= slow]
    if not at_speed:
        return {}
    base = float(np.median(at_speed))
    return {i: (float(s), medians[i] / base) for i, s in enumerate(slowdowns)
            if s > slow and medians[i] > DIP_FELT * base}


def rounds_kept(medians: Sequence[float], slowdowns: Sequence[float]) -> list[int]:
    """Indices of the rounds a cell's headline is taken of: every round but those :func:`host_slow_rounds` sets
    aside. The one rule behind the headline (:func:`rounds_at_speed`), its quartiles
    (:func:`workbench.measure.rounds.merge_rounds`), paired verdicts (:func:`ids_at_speed`) and ``compare``
    between runs (:func:`workbench.judge.between_runs.at_speed`)."""
    felt = host_slow_rounds(medians, slowdowns)
    return [i for i in range(len(medians)) if i not in felt]


def rounds_at_speed(medians: Sequence[float], slowdowns: Sequence[float]) -> list[float]:
    """The round medians of :func:`rounds_kept`: what a cell's headline and spread are taken of (all of them where
    none was felt)."""
    return [float(medians[i]) for i in rounds_kept(medians, slowdowns)]



def samples_at_speed(samples: Sequence[float], sizes: Sequence[int], medians: Sequence[float],
                     slowdowns: Sequence[float]) -> tuple[list[float], list[int]]:
    """The pooled samples and round sizes of the rounds :func:`rounds_kept` keeps: the quartiles beside a headline
    are of the same rounds, and so is any median set beside those quartiles (01's figure moved torch's band by the
    median of every round's samples, two of its three rounds set aside, to 87-92 GB/s around a point at 25).
    Everything, unchanged, where no round is set aside or ``sizes`` does not split ``samples`` into the rounds."""
    at_speed = set(rounds_kept(medians, slowdowns))
    if len(at_speed) == len(medians) or not sizes or len(sizes) != len(medians) or sum(sizes) != len(samples):
        return list(samples), list(sizes)
    kept: list[float] = []
    kept_sizes: list[int] = []
    start = 0
    for r, n in enumerate(sizes):
        if r in at_speed:
            kept += samples[start:start + n]
            kept_sizes.append(n)
        start += n
    return kept, kept_sizes

#: Appended to the id of a round set aside (:func:`ids_at_speed`): no other row's round has that id, so no pairing
#: matches it.
SET_ASIDE = "#host-slow"


def ids_at_speed(ids: list[str] | None, medians: Sequence[float], slowdowns: Sequence[float]) -> list[str] | None:
    """A row's round ids with those of the rounds :func:`host_slow_rounds` sets aside marked (:data:`SET_ASIDE`),
    so that a verdict pairing rounds by id leaves them out, as the row's headline does: 03 judged a numpy baseline
    on a round its own note said was set aside."""
    if not ids or len(ids) != len(medians):
        return ids
    kept = set(rounds_kept(medians, slowdowns))
    return [k if i in kept else f"{k}{SET_ASIDE}" for i, k in enumerate(ids)] if len(kept) < len(ids) else ids


def set_aside_out(times: np.ndarray, ids: list[str] | None) -> tuple[np.ndarray, list[str] | None]:
    """``times`` and ``ids`` without the rounds whose ids :func:`ids_at_speed` marked (as they are where none is):
    what a verdict pairs by id, so a round set aside on both sides is never paired back in."""
    if not ids or len(ids) != len(times) or not any(k.endswith(SET_ASIDE) for k in ids):
        return times, ids
    keep = [not k.endswith(SET_ASIDE) for k in ids]
    return np.asarray(times)[keep], [k for k, kept in zip(ids, keep, strict=True) if kept]


def many_ids_at_speed(ids: Sequence[list[str] | None], medians: Sequence[np.ndarray],
                      slowdowns: Sequence[np.ndarray], slow: float = HOST_SLOW) -> list[list[str] | None]:
    """:func:`ids_at_speed` of each row (``medians`` and ``slowdowns`` as float arrays), the medians of the rounds at
    speed taken at once for the rows of one round count and one pattern of slow rounds. Why: in real rows most
    cells have a round the slow host stretched, and one-row medians were 2 s of every 100,000 rows' report."""
    out = list(ids)
    by_len: dict[int, list[int]] = {}
    for i, (k, m, h) in enumerate(zip(ids, medians, slowdowns, strict=True)):
        n = len(m)
        if k and len(k) == n >= 2 and len(h) == n:  # else nothing is set aside (as ids_at_speed says)
            by_len.setdefault(n, []).append(i)
    for rows in by_len.values():
        m = np.array([medians[i] for i in rows], dtype=float)
        h = np.array([slowdowns[i] for i in rows], dtype=float)
        is_slow = h > slow
        # each round slow (1), at speed (0) or neither (2: a NaN probe), as host_slow_rounds tells them apart
        patterns, which = np.unique(np.where(is_slow, 1, np.where(h <= slow, 0, 2)), axis=0, return_inverse=True)
        for p, pattern in enumerate(patterns):
            at_speed = pattern == 0
            if not (pattern == 1).any() or not at_speed.any():  # no round slow, or none at speed to set them against
                continue
            sel = np.flatnonzero(which.reshape(-1) == p)
            base = np.median(m[sel][:, at_speed], axis=1)
            felt = is_slow[sel] & (m[sel] > DIP_FELT * base[:, None])
            for j in np.flatnonzero(felt.any(axis=1)).tolist():
                r = rows[sel[j]]
                out[r] = [f"{k}{SET_ASIDE}" if f else k for k, f in zip(ids[r], felt[j].tolist(), strict=True)]
    return out

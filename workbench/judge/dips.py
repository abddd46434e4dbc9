"""The host's memory weather in a cell's rounds: which rounds' bandwidth probes read low, and which of those the
cell itself felt. Plain statistics on a row's per-round figures, shared by the harness (a row's noise note,
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
